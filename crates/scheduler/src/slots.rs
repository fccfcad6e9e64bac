//! Where on the timeline a monitor's checks fall, and what they are called.
//!
//! A checked monitor's checks are due at `offset + k * interval` (epoch
//! milliseconds), with `offset` a hash of its id modulo the interval. Two
//! consequences:
//!
//! - monitors that share an interval are spread over it instead of all firing
//!   on the same second;
//! - every replica, before and after any restart, computes the very same due
//!   times, and so the very same check ids ([`check_id`]), which is what lets
//!   JetStream's `Nats-Msg-Id` deduplication and the recorder's one result per
//!   check id make a republished slot harmless.
//!
//! All times here are milliseconds since the Unix epoch (`i64`).

use uuid::Uuid;

/// The namespace of the UUIDv5 check ids the scheduler derives. Fixed forever:
/// changing it would rename every slot and defeat deduplication across a deploy.
pub const CHECK_ID_NAMESPACE: Uuid = Uuid::from_u128(0x3f0b_6c1e_8a57_4d2e_9b41_c7e2_5a96_d013);

/// A stable 64-bit mix (the SplitMix64 finaliser). Not `std`'s hasher: its
/// output may change between Rust releases, and the offsets must not.
pub const fn mix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The monitor's phase within its interval, in `0..interval_ms`.
pub fn offset_ms(monitor_id: i64, interval_ms: i64) -> i64 {
    let interval = interval_ms.max(1) as u64;
    (mix64(monitor_id as u64) % interval) as i64
}

/// The latest slot at or before `t`.
pub fn slot_at_or_before(monitor_id: i64, interval_ms: i64, t: i64) -> i64 {
    let interval = interval_ms.max(1);
    let offset = offset_ms(monitor_id, interval);
    t - (t - offset).rem_euclid(interval)
}

/// The first slot strictly after `t`.
pub fn slot_after(monitor_id: i64, interval_ms: i64, t: i64) -> i64 {
    slot_at_or_before(monitor_id, interval_ms, t) + interval_ms.max(1)
}

/// The first slot at or after `t`.
pub fn slot_at_or_after(monitor_id: i64, interval_ms: i64, t: i64) -> i64 {
    let before = slot_at_or_before(monitor_id, interval_ms, t);
    if before == t {
        t
    } else {
        before + interval_ms.max(1)
    }
}

/// The id of the scheduled check of `monitor_id` due at `due_at_ms`:
/// UUIDv5 of `"{monitor_id}:{due_at_ms}"`.
pub fn check_id(monitor_id: i64, due_at_ms: i64) -> Uuid {
    Uuid::new_v5(
        &CHECK_ID_NAMESPACE,
        format!("{monitor_id}:{due_at_ms}").as_bytes(),
    )
}

/// The id of the failed check recorded for a heartbeat deadline that passed
/// without a ping: UUIDv5 of `"hb-missed:{monitor_id}:{deadline_ms}"`.
pub fn missed_heartbeat_id(monitor_id: i64, deadline_ms: i64) -> Uuid {
    Uuid::new_v5(
        &CHECK_ID_NAMESPACE,
        format!("hb-missed:{monitor_id}:{deadline_ms}").as_bytes(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEN_S: i64 = 10_000;

    #[test]
    fn slots_are_offset_plus_multiples_of_the_interval() {
        let id = 42;
        let offset = offset_ms(id, TEN_S);
        assert!((0..TEN_S).contains(&offset));
        let now = 1_800_000_123_456;
        let before = slot_at_or_before(id, TEN_S, now);
        assert!(before <= now && now - before < TEN_S);
        assert_eq!(before.rem_euclid(TEN_S), offset);
        assert_eq!(slot_after(id, TEN_S, now), before + TEN_S);
        assert_eq!(
            slot_after(id, TEN_S, before),
            before + TEN_S,
            "strictly after"
        );
        assert_eq!(slot_at_or_before(id, TEN_S, before), before);
        assert_eq!(slot_at_or_after(id, TEN_S, before), before);
        assert_eq!(slot_at_or_after(id, TEN_S, before + 1), before + TEN_S);
    }

    #[test]
    fn offsets_are_fixed_across_releases() {
        // Pinned values: if these change, every deployed slot (and check id) moves.
        assert_eq!(mix64(0), 0xE220_A839_7B1D_CDAF);
        assert_eq!(offset_ms(1, 300_000), (mix64(1) % 300_000) as i64);
        assert_eq!(
            check_id(7, 1_000),
            Uuid::new_v5(&CHECK_ID_NAMESPACE, b"7:1000")
        );
    }

    #[test]
    fn monitors_sharing_an_interval_are_spread_over_it() {
        let interval = 60_000;
        let buckets = 10;
        let mut per_bucket = vec![0u32; buckets];
        for id in 1..=10_000 {
            per_bucket[(offset_ms(id, interval) * buckets as i64 / interval) as usize] += 1;
        }
        // 1 000 expected per bucket; a burst would put thousands in one.
        for (i, n) in per_bucket.iter().enumerate() {
            assert!((800..1200).contains(n), "bucket {i} holds {n}");
        }
    }

    #[test]
    fn check_ids_differ_per_slot_and_per_monitor() {
        assert_ne!(check_id(1, 1_000), check_id(1, 11_000));
        assert_ne!(check_id(1, 1_000), check_id(2, 1_000));
        assert_eq!(check_id(1, 1_000), check_id(1, 1_000));
        assert_ne!(missed_heartbeat_id(1, 1_000), check_id(1, 1_000));
    }

    #[test]
    fn negative_times_still_land_on_slots() {
        let t = -5;
        let before = slot_at_or_before(3, TEN_S, t);
        assert!(before <= t);
        assert_eq!(before.rem_euclid(TEN_S), offset_ms(3, TEN_S));
    }
}
