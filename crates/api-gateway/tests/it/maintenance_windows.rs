//! Recurring maintenance windows at the API: a first start in a DST fold is
//! an instant like any other (the wall-time rule itself is unit-tested in
//! uptime-maintenance).

use crate::common::spawn_app;
use chrono::{DateTime, Utc};
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn a_first_start_in_the_autumn_fold_is_accepted_as_the_instant_it_is() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    // 00:15 UTC on 31 October 2027 is the first 02:15 in Berlin; 01:15 UTC
    // the second. Both are instants: neither is "ambiguous".
    for (starts_at, second) in [
        ("2027-10-31T00:15:00Z", "2027-11-07T01:15:00Z"),
        ("2027-10-31T01:15:00Z", "2027-11-07T01:15:00Z"),
    ] {
        let (status, window) = app
            .post(
                "/api/v1/maintenance-windows",
                &key,
                json!({"name": "sunday", "label_selector": {"team": "db"},
                       "rrule": "FREQ=WEEKLY;BYDAY=SU;BYHOUR=2", "timezone": "Europe/Berlin",
                       "duration_secs": 1800, "starts_at": starts_at}),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{window}");
        let expected: Vec<DateTime<Utc>> = [starts_at, second]
            .iter()
            .map(|t| t.parse().unwrap())
            .collect();
        let next: Vec<DateTime<Utc>> = window["next_occurrences"]
            .as_array()
            .unwrap()
            .iter()
            .take(2)
            .map(|o| o["starts_at"].as_str().unwrap().parse().unwrap())
            .collect();
        assert_eq!(next, expected, "{window}");
    }
}
