//! How alerts, verification emails and Slack messages read: durations,
//! facts, regions, and user text kept inert.

use super::*;
use chrono::TimeZone;

#[test]
fn durations_read_naturally() {
    let t0 = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
    let at = |s: i64| t0 + chrono::Duration::seconds(s);
    assert_eq!(human_duration(t0, at(42)), "42s");
    assert_eq!(human_duration(t0, at(125)), "2m 5s");
    assert_eq!(human_duration(t0, at(2 * 3600 + 5 * 60)), "2h 5m");
    assert_eq!(human_duration(t0, at(3 * 86_400 + 4 * 3600)), "3d 4h");
    assert_eq!(human_duration(at(10), t0), "0s", "never negative");
}

fn down_in_two_of_three(name: &str) -> AlertEvent {
    use uptime_contracts::{CheckRef, MonitorKind, MonitorStatus, Trigger};
    use uptime_contracts::{MonitorRef, RegionOutcome, Round, StateChangedV3};
    let at = Utc.with_ymd_and_hms(2026, 11, 23, 5, 0, 0).unwrap();
    let round_id = uuid::Uuid::new_v4();
    let region = |name: &str, seen, latency_ms, error: Option<&str>| RegionOutcome {
        region: name.into(),
        seen,
        check_id: Some(uuid::Uuid::new_v4()),
        latency_ms,
        http_status: None,
        error: error.map(String::from),
    };
    let event = StateChangedV3 {
        event_id: uuid::Uuid::new_v4(),
        monitor: MonitorRef {
            id: 7,
            user_id: 1,
            name: name.into(),
            kind: MonitorKind::Http,
            target: Some("https://example.com/?a=1&b=2".into()),
        },
        previous_status: MonitorStatus::Up,
        status: MonitorStatus::Down,
        occurred_at: at,
        previous_since: None,
        consecutive_failures: 2,
        check: CheckRef {
            check_id: round_id,
            trigger: Trigger::Scheduled,
            checked_at: at,
            status: MonitorStatus::Down,
            latency_ms: Some(5000),
            http_status: None,
            error: Some("eu: connection refused; us: timed out after 5 s".into()),
        },
        round: Some(Round {
            round_id,
            quorum: 2,
            regions: vec![
                region("ap", RegionSeen::Passed, Some(80), None),
                region(
                    "eu",
                    RegionSeen::Failed,
                    Some(3),
                    Some("connection refused"),
                ),
                region(
                    "us",
                    RegionSeen::Failed,
                    Some(5000),
                    Some("timed out after 5 s"),
                ),
            ],
            note: None,
        }),
    };
    AlertEvent::from_state_change(&event.into()).expect("an alert")
}

const EXPECTED_REGIONS: &str =
    "Failed in eu (connection refused), us (timed out after 5 s); passed in ap (80 ms); quorum 2 of 3";

#[test]
fn the_email_names_the_failing_regions_and_what_each_saw() {
    let email = email(&down_in_two_of_three("Shop"));
    assert!(
        email
            .body
            .contains(&format!("Regions: {EXPECTED_REGIONS}\n")),
        "{}",
        email.body
    );
}

#[test]
fn slack_names_the_regions_and_keeps_user_text_inert() {
    let message = slack(&down_in_two_of_three("Shop <!channel> & co"));
    // Every mrkdwn text: the notification text, the summary, the fields.
    let mut mrkdwn = vec![message["text"].as_str().unwrap().to_string()];
    for block in message["blocks"].as_array().unwrap() {
        if block["text"]["type"] == "mrkdwn" {
            mrkdwn.push(block["text"]["text"].as_str().unwrap().to_string());
        }
        for field in block["fields"].as_array().cloned().unwrap_or_default() {
            mrkdwn.push(field["text"].as_str().unwrap().to_string());
        }
    }
    assert!(
        mrkdwn.contains(&format!("*Regions*\n{EXPECTED_REGIONS}")),
        "{mrkdwn:?}"
    );
    for text in &mrkdwn {
        assert!(!text.contains("<!channel>"), "{text}");
    }
    assert!(
        mrkdwn[1].contains("Shop &lt;!channel> &amp; co"),
        "{mrkdwn:?}"
    );
}

#[test]
fn labels_show_in_every_rendering_and_only_when_there_are_some() {
    let labels: uptime_labels::Labels =
        serde_json::from_value(serde_json::json!({"team": "payments", "env": "<prod>"})).unwrap();
    let alert = down_in_two_of_three("Shop").with_labels(labels);
    let body = email(&alert).body;
    assert!(
        body.contains("Labels: env=<prod>, team=payments\n"),
        "{body}"
    );
    let message = slack(&alert).to_string();
    assert!(
        message.contains("*Labels*\\nenv=&lt;prod>, team=payments"),
        "{message}"
    );
    let webhook = alert.to_json();
    assert_eq!(
        webhook["monitor"]["labels"],
        serde_json::json!({"env": "<prod>", "team": "payments"})
    );
    let back: AlertEvent = serde_json::from_value(webhook).unwrap();
    assert_eq!(back, alert, "a stored payload reads back");

    let unlabelled = down_in_two_of_three("Shop");
    assert!(!email(&unlabelled).body.contains("Labels:"));
    assert!(
        unlabelled.to_json()["monitor"].get("labels").is_none(),
        "absent, as before labels"
    );
}

#[test]
fn the_webhook_carries_the_round_and_single_region_alerts_do_not() {
    let alert = down_in_two_of_three("Shop");
    let body = alert.to_json();
    let regions = body["round"]["regions"].as_array().expect("the round");
    assert_eq!(body["round"]["quorum"], 2);
    assert_eq!(regions.len(), 3);
    assert_eq!(regions[1]["region"], "eu");
    assert_eq!(regions[1]["seen"], "failed");
    assert_eq!(regions[1]["error"], "connection refused");
    assert_eq!(regions[0]["latency_ms"], 80);
    assert_eq!(
        regions[0]["http_status"],
        serde_json::Value::Null,
        "present"
    );
    let back: AlertEvent = serde_json::from_value(body).unwrap();
    assert_eq!(back, alert, "a stored payload reads back");

    let single = AlertEvent {
        round: None,
        ..alert
    };
    assert!(single.to_json().get("round").is_none(), "absent, as before");
    assert!(!email(&single).body.contains("Regions:"));
}

#[test]
fn silent_and_offline_regions_and_the_note_are_said() {
    let mut alert = down_in_two_of_three("Shop");
    let round = alert.round.as_mut().unwrap();
    round.regions[0].seen = RegionSeen::Offline;
    round.regions.push(crate::event::RegionInfo {
        region: "sa".into(),
        seen: RegionSeen::NoAnswer,
        check_id: None,
        latency_ms: None,
        http_status: None,
        error: None,
    });
    round.regions[1].error = Some("x".repeat(5000));
    round.note = Some("quorum 2 needs 2 regions".into());
    let line = regions_line(alert.round.as_ref().unwrap());
    assert!(
        line.ends_with("; no answer from sa; offline: ap; quorum 2 of 4"),
        "{line}"
    );
    assert!(line.len() < 400, "a long error is cut: {line}");
    assert!(email(&alert)
        .body
        .contains("Round: quorum 2 needs 2 regions\n"));
}
