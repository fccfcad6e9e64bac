//! The quorum rules, table-driven.

use super::*;
use chrono::TimeZone;

fn t(secs: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_700_000_000 + secs, 0).unwrap()
}

/// A region's answer: `ok` passes in `ms`, else fails with `error`.
fn answer(region: &str, ok: bool, ms: u32, error: &str) -> CheckResult {
    CheckResult {
        check_id: Uuid::new_v5(&Uuid::nil(), region.as_bytes()),
        monitor_id: 7,
        definition_version: 1,
        trigger: Trigger::Scheduled,
        due_at: Some(t(0)),
        checked_at: t(1 + ms as i64 / 1000),
        outcome: if ok {
            CheckOutcome::Pass
        } else {
            CheckOutcome::Fail
        },
        latency_ms: Some(ms),
        http_status: Some(if ok { 200 } else { 503 }),
        error: (!ok).then(|| error.to_string()),
        ssl_expires_at: None,
        reporter: format!("checker-{region}"),
        region: region.into(),
        round_id: Some(Uuid::nil()),
    }
}

/// What one table row expects.
struct Case {
    name: &'static str,
    regions: &'static [&'static str],
    quorum: u32,
    /// (region, passed, latency ms, error)
    answers: &'static [(&'static str, bool, u32, &'static str)],
    offline: &'static [&'static str],
    /// `None`: no verdict.
    outcome: Option<CheckOutcome>,
    seen: &'static [RegionSeen],
    /// Substrings the note must hold (empty: no note at all).
    note: &'static [&'static str],
}

use CheckOutcome::{Fail, Pass};
use RegionSeen::{Failed, NoAnswer, Offline, Passed};

const CASES: &[Case] = &[
    Case {
        name: "all pass",
        regions: &["eu", "us", "ap"],
        quorum: 2,
        answers: &[("eu", true, 10, ""), ("us", true, 20, ""), ("ap", true, 30, "")],
        offline: &[],
        outcome: Some(Pass),
        seen: &[Passed, Passed, Passed],
        note: &[],
    },
    Case {
        name: "one of three fails: a regional problem",
        regions: &["eu", "us", "ap"],
        quorum: 2,
        answers: &[("eu", false, 10, "refused"), ("us", true, 20, ""), ("ap", true, 30, "")],
        offline: &[],
        outcome: Some(Pass),
        seen: &[Failed, Passed, Passed],
        note: &["regional problem: eu failed"],
    },
    Case {
        name: "two of three fail: down",
        regions: &["eu", "us", "ap"],
        quorum: 2,
        answers: &[("eu", false, 10, "refused"), ("us", false, 20, "timed out"), ("ap", true, 30, "")],
        offline: &[],
        outcome: Some(Fail),
        seen: &[Failed, Failed, Passed],
        note: &[],
    },
    Case {
        name: "quorum 3: two failures are still regional",
        regions: &["eu", "us", "ap"],
        quorum: 3,
        answers: &[("eu", false, 10, "refused"), ("us", false, 20, "timed out"), ("ap", true, 30, "")],
        offline: &[],
        outcome: Some(Pass),
        seen: &[Failed, Failed, Passed],
        note: &["regional problem: eu, us failed"],
    },
    Case {
        name: "an offline region is not a failure and the quorum shrinks",
        regions: &["eu", "us", "ap"],
        quorum: 2,
        answers: &[("eu", false, 10, "refused")],
        offline: &["us"],
        outcome: Some(Fail),
        seen: &[Failed, Offline, NoAnswer],
        note: &[
            "quorum 2 needs 2 regions; only eu answered (us offline, ap no answer): decided on eu alone",
        ],
    },
    Case {
        name: "one region offline, the other two answer and reach quorum",
        regions: &["eu", "us", "ap"],
        quorum: 2,
        answers: &[("eu", true, 10, ""), ("us", true, 20, "")],
        offline: &["ap"],
        outcome: Some(Pass),
        seen: &[Passed, Passed, Offline],
        note: &["not counted: ap offline"],
    },
    Case {
        name: "silent regions with one failure among two answers",
        regions: &["eu", "us", "ap"],
        quorum: 2,
        answers: &[("eu", false, 10, "refused"), ("us", true, 20, "")],
        offline: &[],
        outcome: Some(Pass),
        seen: &[Failed, Passed, NoAnswer],
        note: &["not counted: ap no answer", "regional problem: eu failed"],
    },
    Case {
        name: "nobody answered: no verdict",
        regions: &["eu", "us"],
        quorum: 1,
        answers: &[],
        offline: &["eu"],
        outcome: None,
        seen: &[Offline, NoAnswer],
        note: &["no region answered (eu offline, us no answer)"],
    },
    Case {
        name: "quorum 1: any failure is down",
        regions: &["eu", "us"],
        quorum: 1,
        answers: &[("eu", true, 10, ""), ("us", false, 20, "refused")],
        offline: &[],
        outcome: Some(Fail),
        seen: &[Passed, Failed],
        note: &[],
    },
    Case {
        name: "an answer from a region outside the round is ignored",
        regions: &["eu", "us"],
        quorum: 2,
        answers: &[("eu", true, 10, ""), ("us", true, 20, ""), ("xx", false, 5, "refused")],
        offline: &[],
        outcome: Some(Pass),
        seen: &[Passed, Passed],
        note: &[],
    },
];

fn run(case: &Case) -> Decision {
    let regions: Vec<String> = case.regions.iter().map(|r| r.to_string()).collect();
    let answers: BTreeMap<String, CheckResult> = case
        .answers
        .iter()
        .map(|(r, ok, ms, e)| (r.to_string(), answer(r, *ok, *ms, e)))
        .collect();
    let offline: HashSet<String> = case.offline.iter().map(|r| r.to_string()).collect();
    decide(&RoundInput {
        definition_version: 1,
        round_id: Uuid::from_u128(99),
        monitor_id: 7,
        trigger: Trigger::Scheduled,
        due_at: t(0),
        regions: &regions,
        quorum: case.quorum,
        answers: &answers,
        offline: &offline,
    })
}

#[test]
fn rounds_are_decided_by_the_table() {
    for case in CASES {
        let d = run(case);
        assert_eq!(
            d.verdict.as_ref().map(|v| v.outcome),
            case.outcome,
            "{}",
            case.name
        );
        let seen: Vec<RegionSeen> = d.round.regions.iter().map(|r| r.seen).collect();
        assert_eq!(seen, case.seen, "{}", case.name);
        let region_names: Vec<&str> = d.round.regions.iter().map(|r| r.region.as_str()).collect();
        assert_eq!(region_names, case.regions, "{}: round order", case.name);
        match (&d.round.note, case.note) {
            (None, []) => {}
            (Some(note), expected) if !expected.is_empty() => {
                for part in expected {
                    assert!(
                        note.contains(part),
                        "{}: {note:?} lacks {part:?}",
                        case.name
                    );
                }
            }
            (note, expected) => panic!("{}: note {note:?}, expected {expected:?}", case.name),
        }
        assert_eq!(d.round.round_id, Uuid::from_u128(99));
        assert_eq!(d.round.quorum, case.quorum);
    }
}

#[test]
fn a_verdict_is_one_result_with_the_round_id() {
    let d = run(&CASES[2]);
    let v = d.verdict.unwrap();
    assert_eq!(v.check_id, Uuid::from_u128(99), "check id = round id");
    assert_eq!(v.monitor_id, 7);
    assert_eq!(v.due_at, Some(t(0)));
    assert_eq!(v.checked_at, t(1), "the earliest check of the round");
    assert_eq!(v.http_status, Some(503), "the first failing region's");
    assert_eq!(v.latency_ms, Some(10));
    assert_eq!(v.error.as_deref(), Some("eu: refused; us: timed out"));
}

#[test]
fn an_up_round_carries_the_slowest_passing_latency() {
    let d = run(&CASES[1]);
    let v = d.verdict.unwrap();
    assert_eq!(v.outcome, Pass);
    assert_eq!(v.latency_ms, Some(30), "ap was the slowest to pass");
    assert_eq!(v.error, None);
}

#[test]
fn the_verdict_error_is_bounded() {
    let regions: Vec<String> = (0..10).map(|i| format!("r{i}")).collect();
    let long = "x".repeat(400);
    let answers: BTreeMap<String, CheckResult> = regions
        .iter()
        .map(|r| (r.clone(), answer(r, false, 10, &long)))
        .collect();
    let d = decide(&RoundInput {
        definition_version: 1,
        round_id: Uuid::nil(),
        monitor_id: 7,
        trigger: Trigger::Scheduled,
        due_at: t(0),
        regions: &regions,
        quorum: 6,
        answers: &answers,
        offline: &HashSet::new(),
    });
    let error = d.verdict.unwrap().error.unwrap();
    assert_eq!(error.chars().count(), MAX_VERDICT_ERROR_CHARS);
    assert!(error.ends_with('…'));
}
