//! Monitors checked from three regions: rounds decided by quorum, when all
//! answered (in the batch) or past their deadline (the sweeper), with
//! presence telling offline regions from silent ones.

use crate::common::{eventually, Harness};
use chrono::{DateTime, Duration, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use std::collections::HashSet;
use uptime_contracts::{
    check_id_in_round, CheckOutcome, CheckResult, CheckerPresenceV1, Message, MonitorStatus,
    StateChange, Trigger,
};
use uptime_db::schema::{check_results, check_rounds, daily_uptime};
use uuid::Uuid;

const REGIONS: [&str; 3] = ["eu", "us", "ap"];

/// A recorder whose default regions are eu, us and ap (grace 0 s), with the
/// periodic sweep effectively off unless `sweeping`.
async fn harness(sweeping: bool) -> Harness {
    let mut h = Harness::new().await;
    h.start_recorder_with(|s| {
        let regions: Vec<String> = REGIONS.iter().map(|r| r.to_string()).collect();
        s.regions.known = regions.clone();
        s.regions.default = regions;
        s.recorder.round_grace_secs = 0;
        s.recorder.round_sweep_interval_ms = if sweeping { 100 } else { 3_600_000 };
    })
    .await;
    h
}

/// Region `region`'s result in round `round`.
fn answer(
    monitor_id: i64,
    round: Uuid,
    due_at: DateTime<Utc>,
    region: &str,
    ok: bool,
) -> CheckResult {
    CheckResult {
        check_id: check_id_in_round(round, region, REGIONS.len()),
        monitor_id,
        definition_version: 1,
        trigger: Trigger::Scheduled,
        due_at: Some(due_at),
        checked_at: due_at,
        outcome: if ok {
            CheckOutcome::Pass
        } else {
            CheckOutcome::Fail
        },
        latency_ms: Some(40),
        http_status: Some(if ok { 200 } else { 503 }),
        error: (!ok).then(|| format!("{region} saw 503")),
        ssl_expires_at: None,
        reporter: format!("checker-{region}"),
        region: region.into(),
        round_id: Some(round),
    }
}

impl Harness {
    /// Publishes one round's answers (`(region, passed)`) and waits until recorded.
    async fn round(
        &self,
        monitor_id: i64,
        due_at: DateTime<Utc>,
        answers: &[(&str, bool)],
    ) -> Uuid {
        let round = Uuid::new_v4();
        for (region, ok) in answers {
            let a = answer(monitor_id, round, due_at, region, *ok);
            self.publish_with_id(&a, &a.check_id.to_string()).await;
        }
        self.wait_drained().await;
        round
    }

    /// (decided, verdict, decision) of a round; `None` when there is no row.
    async fn round_row(
        &self,
        round: Uuid,
    ) -> Option<(bool, Option<String>, Option<serde_json::Value>)> {
        check_rounds::table
            .find(round)
            .select((
                check_rounds::decided_at.is_not_null(),
                check_rounds::verdict,
                check_rounds::decision,
            ))
            .first(&mut self.conn().await)
            .await
            .optional()
            .unwrap()
    }

    async fn daily_total(&self, monitor_id: i64) -> (i32, i32) {
        daily_uptime::table
            .filter(daily_uptime::monitor_id.eq(monitor_id))
            .select((daily_uptime::total_checks, daily_uptime::up_checks))
            .first(&mut self.conn().await)
            .await
            .optional()
            .unwrap()
            .unwrap_or((0, 0))
    }
}

fn seen(decision: &serde_json::Value) -> Vec<(String, String)> {
    decision["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["region"].as_str().unwrap().to_string(),
                r["seen"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn one_failing_region_is_a_regional_problem_and_raises_no_event() {
    let h = harness(false).await;
    let id = h.monitor(|m| m.confirmation_count = 1).await;
    let t0 = Utc::now();
    h.round(id, t0, &[("eu", true), ("us", true), ("ap", true)])
        .await;
    assert_eq!(h.monitor_row(id).await.status, MonitorStatus::Up);
    let up_events = h.events(StateChange::SUBJECT).await;
    assert_eq!(up_events.len(), 1, "pending→up: {up_events:?}");

    let round = h
        .round(
            id,
            t0 + Duration::seconds(60),
            &[("eu", false), ("us", true), ("ap", true)],
        )
        .await;
    let (decided, verdict, decision) = h.round_row(round).await.expect("round stored");
    assert!(decided);
    assert_eq!(verdict.as_deref(), Some("up"));
    let decision = decision.unwrap();
    let note = decision["note"].as_str().unwrap();
    assert!(note.contains("regional problem: eu failed"), "{note}");
    assert_eq!(decision["quorum"], 2, "a majority of three");

    let m = h.monitor_row(id).await;
    assert_eq!(
        m.status,
        MonitorStatus::Up,
        "one region of three is not quorum"
    );
    assert_eq!(
        m.consecutive_failures, 0,
        "a regional problem counts no failure"
    );
    assert_eq!(
        h.daily_total(id).await,
        (2, 2),
        "two rounds, not six checks"
    );
    assert_eq!(
        h.events(StateChange::SUBJECT).await.len(),
        1,
        "no new event"
    );

    // Every region's result is stored, naming its region and round.
    let stored: Vec<(Option<String>, Option<Uuid>)> = check_results::table
        .filter(check_results::round_id.eq(round))
        .select((check_results::region, check_results::round_id))
        .load(&mut h.conn().await)
        .await
        .unwrap();
    let regions: HashSet<String> = stored.iter().filter_map(|r| r.0.clone()).collect();
    assert_eq!(regions, REGIONS.iter().map(|r| r.to_string()).collect());
}

#[tokio::test]
async fn two_failing_regions_turn_it_down_after_confirmation_count_rounds() {
    let h = harness(false).await;
    let id = h.monitor(|m| m.confirmation_count = 2).await;
    let t0 = Utc::now();
    h.round(id, t0, &[("eu", true), ("us", true), ("ap", true)])
        .await;
    let failing = [("eu", false), ("us", false), ("ap", true)];
    h.round(id, t0 + Duration::seconds(60), &failing).await;
    let m = h.monitor_row(id).await;
    assert_eq!((m.status, m.consecutive_failures), (MonitorStatus::Up, 1));
    let last = h.round(id, t0 + Duration::seconds(120), &failing).await;
    let m = h.monitor_row(id).await;
    assert_eq!((m.status, m.consecutive_failures), (MonitorStatus::Down, 2));
    assert_eq!(h.daily_total(id).await, (3, 1));

    let v3 = h.events(StateChange::SUBJECT).await;
    assert_eq!(v3.len(), 2, "pending→up, up→down: {v3:?}");
    let down = &v3[1];
    assert_eq!(down["status"], "down");
    assert_eq!(
        down["check"]["check_id"],
        last.to_string(),
        "the round's id"
    );
    let round = &down["round"];
    assert_eq!(round["round_id"], last.to_string());
    assert_eq!(
        seen(round),
        [("eu", "failed"), ("us", "failed"), ("ap", "passed")]
            .map(|(r, s)| (r.to_string(), s.to_string()))
    );
    let error = down["check"]["error"].as_str().unwrap();
    assert!(
        error.contains("eu: eu saw 503") && error.contains("us: us saw 503"),
        "{error}"
    );
    // One message per change: no v2 beside it (issue 20).
    let all = crate::common::read_subject(&h.js, "uptime.events.>").await;
    assert_eq!(all.len(), 2, "{all:?}");
}

#[tokio::test]
async fn a_silent_region_past_the_deadline_is_offline_without_presence() {
    let h = harness(false).await;
    let id = h.monitor(|m| m.timeout_secs = 1).await;
    let due = Utc::now();
    let round = h.round(id, due, &[("eu", false), ("us", true)]).await;
    let (decided, _, _) = h.round_row(round).await.unwrap();
    assert!(!decided, "ap has not answered and the deadline is ahead");

    // The sweep, with the clock past the deadline and no live checker anywhere.
    let applied = recorder::rounds::sweep(
        &h.env.db.pool,
        Some(&HashSet::new()),
        due + Duration::seconds(2),
        100,
    )
    .await
    .unwrap();
    assert_eq!(applied.decided, 1);
    let (decided, verdict, decision) = h.round_row(round).await.unwrap();
    assert!(decided);
    assert_eq!(
        verdict.as_deref(),
        Some("up"),
        "one failure of two answers, quorum 2"
    );
    let decision = decision.unwrap();
    assert_eq!(
        seen(&decision),
        [("eu", "failed"), ("us", "passed"), ("ap", "offline")]
            .map(|(r, s)| (r.to_string(), s.to_string()))
    );
    assert_eq!(h.monitor_row(id).await.status, MonitorStatus::Up);
    assert_eq!(h.daily_total(id).await, (1, 1));

    // A second sweep finds nothing: decided once.
    let again = recorder::rounds::sweep(
        &h.env.db.pool,
        Some(&HashSet::new()),
        due + Duration::seconds(3),
        100,
    )
    .await
    .unwrap();
    assert_eq!(again.decided, 0);

    // ap's late failure is stored and moves nothing.
    let late = answer(id, round, due, "ap", false);
    h.publish_with_id(&late, &late.check_id.to_string()).await;
    h.wait_drained().await;
    assert_eq!(h.results_of(id).await.len(), 3);
    let (_, verdict, after) = h.round_row(round).await.unwrap();
    assert_eq!(verdict.as_deref(), Some("up"));
    assert_eq!(after.unwrap(), decision, "the decision stands");
    let m = h.monitor_row(id).await;
    assert_eq!((m.status, m.consecutive_failures), (MonitorStatus::Up, 0));
    assert_eq!(h.daily_total(id).await, (1, 1));
}

#[tokio::test]
async fn the_sweeper_decides_overdue_rounds_telling_offline_from_silent() {
    let h = harness(true).await;
    // us has a live checker that did not answer; ap has none.
    let store =
        uptime_contracts::presence::open_or_create(&h.js, std::time::Duration::from_secs(30))
            .await
            .unwrap();
    uptime_contracts::presence::announce(
        &store,
        &CheckerPresenceV1 {
            instance_id: "us-1".into(),
            region: "us".into(),
            seen_at: Utc::now(),
        },
    )
    .await
    .unwrap();
    let id = h.monitor(|m| m.timeout_secs = 1).await;
    // Due a minute ago: the deadline has passed when eu's answer arrives.
    let round = h
        .round(id, Utc::now() - Duration::seconds(60), &[("eu", false)])
        .await;
    eventually("round decided by the sweeper", || async {
        h.round_row(round).await.is_some_and(|r| r.0)
    })
    .await;
    let (_, verdict, decision) = h.round_row(round).await.unwrap();
    let decision = decision.unwrap();
    assert_eq!(verdict.as_deref(), Some("down"), "decided on eu alone");
    assert_eq!(
        seen(&decision),
        [("eu", "failed"), ("us", "no_answer"), ("ap", "offline")]
            .map(|(r, s)| (r.to_string(), s.to_string()))
    );
    let note = decision["note"].as_str().unwrap();
    assert!(
        note.contains("only eu answered (ap offline, us no answer): decided on eu alone"),
        "{note}"
    );
    let m = h.monitor_row(id).await;
    assert_eq!(m.status, MonitorStatus::Down, "confirmation count 1");
    let v3 = h.events(StateChange::SUBJECT).await;
    assert_eq!(v3.len(), 1);
    assert_eq!(v3[0]["round"]["round_id"], round.to_string());
}

#[tokio::test]
async fn a_redelivered_answer_counts_once() {
    let h = harness(false).await;
    let id = h.monitor(|m| m.confirmation_count = 3).await;
    let due = Utc::now();
    let round = h.round(id, due, &[("eu", false), ("us", false)]).await;
    // eu's result again under another message id: past JetStream's dedup.
    let again = answer(id, round, due, "eu", false);
    h.publish_with_id(&again, "redelivered").await;
    h.wait_drained().await;
    assert!(!h.round_row(round).await.unwrap().0, "ap still missing");

    let ap = answer(id, round, due, "ap", true);
    h.publish_with_id(&ap, &ap.check_id.to_string()).await;
    h.wait_drained().await;
    assert_eq!(h.round_row(round).await.unwrap().1.as_deref(), Some("down"));
    // Everything again, after the decision.
    for region in ["eu", "us", "ap"] {
        let a = answer(id, round, due, region, region == "ap");
        h.publish_with_id(&a, &format!("late-{region}")).await;
    }
    h.wait_drained().await;

    assert_eq!(h.results_of(id).await.len(), 3, "one row per region");
    let m = h.monitor_row(id).await;
    assert_eq!(m.consecutive_failures, 1, "the round counted once");
    assert_eq!(m.status, MonitorStatus::Pending);
    assert_eq!(h.daily_total(id).await, (1, 0));
}

#[tokio::test]
async fn single_region_results_raise_state_changed_v3_without_a_round() {
    let h = Harness::started().await;
    let id = h.monitor(|_| {}).await;
    let r = crate::common::result(id, Utc::now(), CheckOutcome::Pass);
    h.record(std::slice::from_ref(&r)).await;
    let v3 = h.events(StateChange::SUBJECT).await;
    assert_eq!(v3.len(), 1);
    assert!(v3[0].get("round").is_none());
    assert_eq!(v3[0]["check"]["check_id"], r.check_id.to_string());
    let rounds: i64 = check_rounds::table
        .count()
        .get_result(&mut h.conn().await)
        .await
        .unwrap();
    assert_eq!(rounds, 0, "a round of one region is never written");
}

#[tokio::test]
async fn the_relay_sends_one_transactions_rows_in_id_order_whatever_their_subjects() {
    use uptime_db::schema::outbox_events;
    let h = Harness::started().await;
    let id = h.monitor(|_| {}).await;
    // Two stranded events of one transaction (one created_at) whose ids and
    // subjects sort opposite ways: a warning then a state change. Sorted by
    // subject (descending, as the relay did while an event was several
    // versions) the state change would go first.
    let at = Utc::now() - Duration::minutes(1);
    let rows = [
        (Uuid::from_u128(1), uptime_contracts::SslWarning::SUBJECT),
        (Uuid::from_u128(2), StateChange::SUBJECT),
    ];
    // One statement: the relay must not sweep between the two rows.
    let values: Vec<_> = rows
        .iter()
        .map(|(row_id, subject)| {
            (
                outbox_events::id.eq(*row_id),
                outbox_events::monitor_id.eq(id),
                outbox_events::subject.eq(*subject),
                outbox_events::payload.eq(serde_json::json!({ "row": row_id })),
                outbox_events::created_at.eq(at),
            )
        })
        .collect();
    diesel::insert_into(outbox_events::table)
        .values(values)
        .execute(&mut h.conn().await)
        .await
        .unwrap();
    h.events(StateChange::SUBJECT).await;
    let all = crate::common::read_subject(&h.js, "uptime.events.>").await;
    let order: Vec<&str> = all.iter().map(|e| e["row"].as_str().unwrap()).collect();
    assert_eq!(
        order,
        rows.map(|(row_id, _)| row_id.to_string()),
        "the relay follows the rows' order, not their subjects'"
    );
}
