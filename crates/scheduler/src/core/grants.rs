//! Which granted shards the engine (re)loads, and where each resumes.
//!
//! The engine learns its shard leases as [`Grants`] (see `crate::lease`)
//! and publishes a shard's slots only while its grant is valid. A slot that
//! comes due while the grant has run out is not published (the lease may be
//! another replica's by then); the engine keeps the earliest such slot per
//! shard (its *floor*) so that the lease's watermark stays below it. Who
//! publishes it then:
//!
//! - the shard went to another replica: that replica, from the watermark;
//! - the lease was lost and taken again by this replica between two looks
//!   of the engine (a new `taken_at`, same shard set): this replica, from
//!   the lease's watermark, exactly as if another replica had taken it;
//! - the renewal was only late (same take, valid again): nobody else can
//!   have written the key meanwhile (the renewal's revision check passed),
//!   so this replica, from the floor.
//!
//! In all three the shard is loaded again from its resume point (see
//! `core::shards`): without that the planner keeps the monitors at their
//! next slots, and the slots of the gap are never published by anyone.

use crate::lease::Grants;
use std::collections::BTreeMap;

/// The shards of `next` to (re)load, each with where it resumes, given the
/// grants the engine applied before (`previous`), the floors of the slots
/// it did not publish, and after an engine restart how far the engine
/// before it had published.
pub(crate) fn to_load(
    previous: &Grants,
    next: &Grants,
    dropped: &BTreeMap<u16, i64>,
    restarted_through: Option<i64>,
    now: i64,
) -> Vec<(u16, i64)> {
    next.shards
        .iter()
        .filter_map(|(shard, grant)| {
            let from_lease =
                restarted_through.map_or(grant.resume_from_ms, |r| r.max(grant.resume_from_ms));
            match previous.shards.get(shard) {
                None => Some((*shard, from_lease)),
                Some(before) if before.taken_at != grant.taken_at => Some((*shard, from_lease)),
                Some(_) => dropped
                    .get(shard)
                    .filter(|_| now < grant.valid_until_ms)
                    .map(|floor| (*shard, *floor)),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lease::Grant;

    const NOW: i64 = 1_800_000_000_000;

    fn grants(shards: &[(u16, Grant)]) -> Grants {
        Grants {
            generation: 1,
            shards: shards.iter().copied().collect(),
        }
    }

    fn grant(taken_at: u64, valid_until_ms: i64, resume_from_ms: i64) -> Grant {
        Grant {
            valid_until_ms,
            resume_from_ms,
            taken_at,
        }
    }

    #[test]
    fn new_shards_load_from_the_lease_and_renewed_ones_are_left_alone() {
        let before = grants(&[(1, grant(1, NOW + 100, 0))]);
        let after = grants(&[
            (1, grant(1, NOW + 2_000, 0)),
            (2, grant(2, NOW + 2_000, NOW - 5_000)),
        ]);
        let none = BTreeMap::new();
        assert_eq!(
            to_load(&before, &after, &none, None, NOW),
            vec![(2, NOW - 5_000)]
        );
        assert_eq!(
            to_load(&before, &after, &none, Some(NOW - 1_000), NOW),
            vec![(2, NOW - 1_000)],
            "an engine restarted after a failure resumes where it stopped"
        );
        assert!(to_load(&after, &after, &none, None, NOW).is_empty());
    }

    #[test]
    fn a_slot_not_published_while_the_grant_ran_out_is_published_once_it_is_valid_again() {
        let held = grants(&[(4, grant(7, NOW - 1, 0))]);
        let floor = NOW - 3_000;
        let dropped = BTreeMap::from([(4, floor)]);
        // Still lapsed: nobody knows yet whose the shard is.
        assert!(to_load(&held, &held, &dropped, None, NOW).is_empty());
        // The late renewal landed: the same take, valid again.
        let renewed = grants(&[(4, grant(7, NOW + 8_000, 0))]);
        assert_eq!(
            to_load(&held, &renewed, &dropped, None, NOW),
            vec![(4, floor)]
        );
        // Lost and taken again in one round: from the lease's watermark.
        let retaken = grants(&[(4, grant(9, NOW + 8_000, NOW - 4_000))]);
        assert_eq!(
            to_load(&held, &retaken, &dropped, None, NOW),
            vec![(4, NOW - 4_000)]
        );
        assert_eq!(
            to_load(&held, &retaken, &BTreeMap::new(), None, NOW),
            vec![(4, NOW - 4_000)],
            "taken again with nothing dropped: reloaded all the same"
        );
    }
}
