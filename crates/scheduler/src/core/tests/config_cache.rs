//! The configuration cache: its budget, and the planner publishing from it
//! on time while reads fail (see `core::config_cache`).

use super::super::config_cache::{Cached, ConfigCache};
use super::world::*;
use crate::core::planner::Planner;
use crate::core::Publication;
use crate::slots;
use std::collections::HashSet;
use uptime_contracts::{CheckSpec, MonitorKind};

fn spec(target: &str) -> CheckSpec {
    CheckSpec {
        kind: MonitorKind::Http,
        target: target.to_string(),
        timeout_secs: uptime_contracts::TimeoutSecs::of(10),
        expected_status: uptime_contracts::ExpectedStatus::of(200),
        keyword: None,
        keyword_type: None,
        options: Default::default(),
    }
}

/// The million-monitor bench's kind of monitor.
fn bench_spec(i: usize) -> CheckSpec {
    spec(&format!("http://127.0.0.1:40123/m/{i}"))
}

#[test]
fn a_cached_configuration_comes_back_as_stored_at_its_interval_only() {
    let mut cache = ConfigCache::new(1 << 20);
    let regions = vec!["eu".to_string(), "us".to_string()];
    cache.store(7, 60, 3, Some(&regions), &spec("https://a.example"));
    cache.store(8, 60, 1, None, &spec("https://b.example"));
    assert_eq!(
        cache.lookup(7, 60),
        Some(Cached::Round {
            spec: spec("https://a.example"),
            definition_version: 3,
            regions: Some(regions),
        })
    );
    assert_eq!(
        cache.lookup(8, 60),
        Some(Cached::Round {
            spec: spec("https://b.example"),
            definition_version: 1,
            regions: None,
        })
    );
    assert_eq!(cache.lookup(7, 30), None, "another interval: stale");
    assert_eq!(cache.lookup(9, 60), None, "never read");
    cache.set_paused(8, true);
    assert_eq!(cache.lookup(8, 60), Some(Cached::Paused));
    let tally = cache.take_tally();
    assert_eq!((tally.entries, tally.hits, tally.misses), (2, 3, 2));
    assert_eq!(
        cache.take_tally().hits,
        0,
        "counts are since the last tally"
    );
}

#[test]
fn storing_an_unchanged_row_changes_nothing_and_a_changed_one_replaces_it() {
    let mut cache = ConfigCache::new(1 << 20);
    cache.store(1, 60, 1, None, &spec("https://a.example"));
    let bytes = cache.bytes();
    cache.store(1, 60, 1, None, &spec("https://a.example"));
    assert_eq!((cache.len(), cache.bytes()), (1, bytes));
    cache.store(1, 60, 2, None, &spec("https://a.example/longer"));
    assert_eq!(cache.len(), 1);
    assert_eq!(cache.bytes(), bytes + "/longer".len());
    assert!(matches!(
        cache.lookup(1, 60),
        Some(Cached::Round {
            definition_version: 2,
            ..
        })
    ));
    assert!(cache.remove(1));
    assert!(!cache.remove(1));
    assert_eq!(cache.len(), 0);
}

#[test]
fn a_zero_budget_caches_nothing() {
    let mut cache = ConfigCache::new(0);
    cache.store(1, 60, 1, None, &spec("https://a.example"));
    assert_eq!((cache.len(), cache.bytes()), (0, 0));
    assert_eq!(cache.lookup(1, 60), None);
}

#[test]
fn the_budget_admits_monitors_while_they_fit_and_drops_a_refresh_that_does_not() {
    let budget = 16 * 1024;
    let mut cache = ConfigCache::new(budget);
    for id in 0..1_000 {
        cache.store(id, 60, 1, None, &bench_spec(id as usize));
        assert!(cache.bytes() <= budget, "{} > {budget}", cache.bytes());
    }
    let admitted = cache.len();
    assert!(admitted > 50 && admitted < 1_000, "{admitted}");
    let tally = cache.take_tally();
    assert_eq!(tally.rejected, (1_000 - admitted) as u64);
    assert!(tally.bytes <= budget);

    // The first ones stay (no churn); one that grows past the budget goes
    // rather than staying stale.
    assert!(cache.lookup(0, 60).is_some());
    let mut grown = bench_spec(0);
    grown.target = format!("http://127.0.0.1/{}", "x".repeat(budget));
    cache.store(0, 60, 2, None, &grown);
    assert_eq!(cache.lookup(0, 60), None);
    assert_eq!(cache.len(), admitted - 1);
    assert_eq!(cache.take_tally().rejected, 0, "dropped, not rejected");

    // Forgetting monitors frees their bytes for others.
    let before = cache.bytes();
    cache.retain(|id| id % 2 == 0);
    assert!(cache.bytes() < before);
    assert!(cache.len() < admitted / 2 + 1);
    cache.store(5_000, 60, 1, None, &bench_spec(5_000));
    assert!(cache.lookup(5_000, 60).is_some());
}

/// The bytes per cached monitor at `monitors` of the bench's kind.
fn bytes_per_bench_monitor(monitors: usize) -> usize {
    let budget = crate::settings::DEFAULT_CONFIG_CACHE_BYTES as usize;
    let mut cache = ConfigCache::new(budget);
    for id in 0..monitors {
        cache.store(id as i64, 300, 1, None, &bench_spec(id));
    }
    let bytes = cache.bytes();
    println!(
        "config cache: {} monitors, {bytes} bytes, {} bytes per monitor",
        cache.len(),
        bytes / monitors
    );
    assert_eq!(cache.len(), monitors);
    assert!(bytes <= budget);
    bytes / monitors
}

#[test]
fn a_cached_bench_monitor_takes_about_two_hundred_bytes() {
    // 100,000 fill 2^17 buckets to 76 %; a million fill 2^21 to 48 %, the
    // least full a table gets (208 bytes each: the next test).
    let per_monitor = bytes_per_bench_monitor(100_000);
    assert!((150..=200).contains(&per_monitor), "{per_monitor}");
}

/// The measured cost the default budget is sized by (docs/operations.md):
/// 208 bytes per monitor. Ignored: 30 s in a debug build. Run it with
/// `cargo nextest run -p scheduler --run-ignored only -E 'test(million)' --no-capture`.
#[test]
#[ignore]
fn a_million_bench_monitors_fit_the_default_budget() {
    let per_monitor = bytes_per_bench_monitor(1_000_000);
    assert!(per_monitor <= 220, "{per_monitor}");
}

/// Monitors 1 and 2 (checked every 10 s, read before), and a third never
/// read before the outage: its first slot falls inside it.
fn outage_world(t1: i64) -> (World, i64) {
    let mut rows = vec![
        http(1, 10, NOW - 100 * TEN_S),
        http(2, 10, NOW - 100 * TEN_S),
    ];
    rows[1].config.regions = Some(vec!["eu".into(), "us".into()]);
    // An id whose first slot after `t1` is well past the lookahead.
    let late = (3..100)
        .find(|id| {
            let first = slots::slot_after(*id, TEN_S, t1);
            (t1 + 3_000..t1 + 8_000).contains(&first)
        })
        .unwrap();
    let mut third = http(late, 10, NOW - 100 * TEN_S);
    third.timing.last_checked_at = Some(at(t1));
    third.active = false;
    rows.push(third);
    let mut world = World::with(rows);
    for id in [1, 2] {
        world.row(id).timing.last_checked_at = Some(at(NOW));
    }
    (world, late)
}

fn planner() -> Planner {
    let settings = crate::settings::ScheduleSettings::default();
    Planner::new(LOOKAHEAD, settings.catchup()).with_config_cache_bytes(1 << 20)
}

#[test]
fn while_reads_fail_cached_monitors_are_checked_on_time_and_others_wait() {
    let t1 = NOW + TEN_S;
    let down_until = t1 + 3 * TEN_S;
    // The same schedule with the database up throughout, to compare with.
    let (mut up, late) = outage_world(t1);
    let mut up_planner = loaded_by(planner(), &mut up, NOW);
    up.run(&mut up_planner, NOW, t1);

    let (mut world, _) = outage_world(t1);
    let mut planner = loaded_by(planner(), &mut world, NOW);
    world.run(&mut planner, NOW, t1);
    assert_eq!(world.checks(1).len(), 1, "read (and cached) once");
    // The third monitor is created just before the outage: on the timeline,
    // its configuration never read.
    for w in [&mut up, &mut world] {
        w.row(late).active = true;
    }
    for (w, p) in [(&mut up, &mut up_planner), (&mut world, &mut planner)] {
        p.monitor_changed(late);
        p.changes_arrived();
        w.run(p, t1, t1);
    }
    assert_eq!(planner.monitors(), 3);

    world.failing = usize::MAX;
    world.run(&mut planner, t1, down_until);
    up.run(&mut up_planner, t1, down_until);
    let in_outage = |w: &World, id: i64| -> Vec<(i64, Publication)> {
        w.published
            .iter()
            .filter(|(sent, p)| {
                matches!(p, Publication::Check(d) if d.monitor_id == id) && *sent > t1
            })
            .cloned()
            .collect()
    };
    for id in [1, 2] {
        let served = in_outage(&world, id);
        assert_eq!(served.len(), 3 * if id == 2 { 2 } else { 1 }, "{served:?}");
        assert_eq!(
            served,
            in_outage(&up, id),
            "as if read from its row, on time"
        );
        for (sent_at, publication) in &served {
            assert_eq!(
                *sent_at,
                publication.due_at_ms(),
                "published at its due instant"
            );
        }
    }
    assert!(world.checks(late).is_empty(), "never read: it waits");
    let tally = planner.config_cache_tally();
    assert!(tally.hits >= 6, "{tally:?}");
    assert!(tally.misses >= 1);

    // Back: the waiting slot goes out under its own id, nothing twice.
    world.failing = 0;
    world.run(&mut planner, down_until, down_until + 2 * TEN_S);
    let first = slots::slot_after(late, TEN_S, t1);
    let checks = world.checks(late);
    assert_eq!(due_ms(&checks[0].1), first);
    assert!(checks[0].0 >= down_until, "late, once the database answers");
    let mut ids = HashSet::new();
    for (_, p) in &world.published {
        if let Publication::Check(due) = p {
            assert!(ids.insert(due.check_id), "published twice: {due:?}");
        }
    }
}

#[test]
fn a_monitor_changed_or_paused_before_the_outage_is_not_served_stale() {
    let mut world = World::with([
        http(1, 10, NOW - 100 * TEN_S),
        http(2, 10, NOW - 100 * TEN_S),
        http(3, 10, NOW - 100 * TEN_S),
    ]);
    for id in [1, 2, 3] {
        world.row(id).timing.last_checked_at = Some(at(NOW));
    }
    let mut planner = loaded_by(planner(), &mut world, NOW);
    world.run(&mut planner, NOW, NOW + TEN_S);
    world.row(3).config.maintenance_effect = Some("pause".into());
    world.run(&mut planner, NOW + TEN_S, NOW + 2 * TEN_S);
    assert_eq!(world.checks(1).len(), 2);
    assert_eq!(world.checks(3).len(), 1, "paused after its first slot");

    // Changed (its event arrives as the database goes): not served the old row.
    planner.monitor_changed(1);
    planner.changes_arrived();
    world.failing = usize::MAX;
    world.run(&mut planner, NOW + 2 * TEN_S, NOW + 4 * TEN_S);
    assert_eq!(world.checks(1).len(), 2, "waits for its new row");
    assert_eq!(world.checks(2).len(), 4, "the unchanged one goes on");
    assert_eq!(world.checks(3).len(), 1, "still paused, as last read");
    let tally = planner.config_cache_tally();
    assert!(tally.hits >= 4, "{tally:?}");
}

#[test]
fn a_monitor_gone_before_the_outage_is_forgotten() {
    let mut world = World::with([http(1, 10, NOW - 100 * TEN_S)]);
    world.row(1).timing.last_checked_at = Some(at(NOW));
    let mut planner = loaded_by(planner(), &mut world, NOW);
    world.run(&mut planner, NOW, NOW + TEN_S);
    assert_eq!(planner.config_cache_tally().entries, 1);
    world.row(1).active = false;
    planner.monitor_changed(1);
    planner.changes_arrived();
    world.run(&mut planner, NOW + TEN_S, NOW + 2 * TEN_S);
    assert_eq!(planner.config_cache_tally().entries, 0);
    assert_eq!(world.checks(1).len(), 1);
}
