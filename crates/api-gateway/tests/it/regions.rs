//! Issue 13 in the API: `GET /api/v1/regions` from the checkers' presence,
//! monitors' `regions` and `quorum`, results by region, and rounds.

use crate::check_support::{insert_heartbeat_monitor, insert_monitor, insert_result};
use crate::common::{spawn_app_with, TestApp};
use chrono::{Duration, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use uptime_contracts::round::{RegionOutcome, RegionSeen, Round};
use uptime_contracts::CheckerPresenceV1;
use uptime_db::schema::{check_results, check_rounds, monitors};
use uuid::Uuid;

/// A gateway whose deployment knows eu, us and ap, and checks from eu and
/// us by default.
async fn three_region_app() -> TestApp {
    spawn_app_with(|s| {
        s.regions.known = ["eu", "us", "ap"].map(String::from).to_vec();
        s.regions.default = ["eu", "us"].map(String::from).to_vec();
    })
    .await
}

fn http_monitor(extra: Value) -> Value {
    let mut body = json!({"name": "api", "type": "http", "target": "https://example.com/"});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
}

#[tokio::test]
async fn regions_list_live_checkers_and_offline_known_regions() {
    let app = three_region_app().await;
    let (_, key) = app.new_user("ops").await;
    let seen_at = Utc::now() - Duration::seconds(2);
    for (region, id) in [("eu", "eu-1"), ("eu", "eu-2"), ("mars", "m-1")] {
        let presence = CheckerPresenceV1 {
            instance_id: id.into(),
            region: region.into(),
            seen_at: seen_at + Duration::milliseconds(id.len() as i64 * 10),
        };
        uptime_contracts::presence::announce(&app.state.presence, &presence)
            .await
            .unwrap();
    }

    let (status, body) = app.get("/api/v1/regions", &key).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let regions = body["regions"].as_array().unwrap();
    let names: Vec<&str> = regions
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    // Known and seen, by name: a checker of an unconfigured region shows too.
    assert_eq!(names, ["ap", "eu", "mars", "us"]);
    let eu = &regions[1];
    assert_eq!(eu["status"], "online");
    assert_eq!(eu["checkers"], 2);
    let last: chrono::DateTime<Utc> = serde_json::from_value(eu["last_seen_at"].clone()).unwrap();
    assert_eq!(
        last,
        seen_at + Duration::milliseconds(40),
        "the latest of eu's"
    );
    assert_eq!(regions[2]["status"], "online");
    for offline in [&regions[0], &regions[3]] {
        assert_eq!(offline["status"], "offline", "{offline}");
        assert_eq!(offline["checkers"], 0);
        assert_eq!(offline["last_seen_at"], Value::Null);
    }

    let (status, _) = app.call(Method::GET, "/api/v1/regions", None, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "a key is needed");
}

#[tokio::test]
async fn regions_are_503_when_the_presence_bucket_cannot_be_read() {
    let app = three_region_app().await;
    let (_, key) = app.new_user("ops").await;
    app.state
        .js
        .delete_stream(format!("KV_{}", uptime_contracts::presence::BUCKET))
        .await
        .unwrap();
    let (status, body) = app.get("/api/v1/regions", &key).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
}

#[tokio::test]
async fn monitor_regions_and_quorum_are_validated_naming_the_field() {
    let app = three_region_app().await;
    let (_, key) = app.new_user("ops").await;
    let cases = [
        (json!({"regions": []}), "regions"),
        (json!({"regions": ["eu", "mars"]}), "regions[1]"),
        (json!({"regions": ["eu", "Not A Region"]}), "regions[1]"),
        (json!({"regions": ["eu", "us", "eu"]}), "regions[2]"),
        (json!({"regions": vec!["eu"; 17]}), "regions"),
        (json!({"regions": ["eu"], "quorum": 2}), "quorum"),
        (json!({"quorum": 0}), "quorum"),
        // The default regions are two.
        (json!({"quorum": 3}), "quorum"),
        (json!({"regions": "eu"}), ""),
        (json!({"quorum": "2"}), ""),
    ];
    for (extra, field) in cases {
        let (status, body) = app
            .post("/api/v1/monitors", &key, http_monitor(extra.clone()))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{extra}: {body}");
        if !field.is_empty() {
            let fields: Vec<&str> = body["details"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d["field"].as_str().unwrap())
                .collect();
            assert!(fields.contains(&field), "{extra}: {body}");
        }
    }
    for extra in [json!({"regions": ["eu"]}), json!({"quorum": 1})] {
        let mut body = extra.clone();
        body["name"] = json!("hb");
        body["type"] = json!("heartbeat");
        let (status, body) = app.post("/api/v1/monitors", &key, body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{extra}: {body}");
        assert!(
            body["details"][0]["message"]
                .as_str()
                .unwrap()
                .contains("only for checked monitors"),
            "{body}"
        );
    }
}

#[tokio::test]
async fn monitors_show_effective_regions_and_store_null_for_the_defaults() {
    let app = three_region_app().await;
    let (user_id, key) = app.new_user("ops").await;
    let stored = |id: i64| {
        let pool = app.state.pool.clone();
        async move {
            let mut conn = uptime_db::pool::conn(&pool).await.unwrap();
            monitors::table
                .find(id)
                .select((monitors::regions, monitors::quorum))
                .first::<(Option<Vec<String>>, Option<i32>)>(&mut conn)
                .await
                .unwrap()
        }
    };

    let (status, m) = app
        .post("/api/v1/monitors", &key, http_monitor(json!({})))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{m}");
    assert_eq!(
        (&m["regions"], &m["quorum"]),
        (&json!(["eu", "us"]), &json!(2))
    );
    let id = m["id"].as_i64().unwrap();
    assert_eq!(stored(id).await, (None, None));
    let version = m["definition_version"].as_i64().unwrap();

    // Given in any order, stored sorted; a majority of three is two.
    let path = format!("/api/v1/monitors/{id}");
    let (status, m) = app
        .patch(&path, &key, json!({"regions": ["us", "ap", "eu"]}))
        .await;
    assert_eq!(status, StatusCode::OK, "{m}");
    assert_eq!(
        (&m["regions"], &m["quorum"]),
        (&json!(["ap", "eu", "us"]), &json!(2))
    );
    assert!(
        m["definition_version"].as_i64().unwrap() > version,
        "checks change"
    );
    let (status, m) = app.patch(&path, &key, json!({"quorum": 3})).await;
    assert_eq!(status, StatusCode::OK, "{m}");
    assert_eq!(m["quorum"], 3);
    assert_eq!(
        stored(id).await,
        (Some(["ap", "eu", "us"].map(String::from).to_vec()), Some(3))
    );

    // Back to the two defaults while the quorum stays 3: refused, whole.
    let (status, body) = app.patch(&path, &key, json!({"regions": null})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["details"][0]["field"], "quorum", "{body}");
    let (status, m) = app
        .patch(&path, &key, json!({"regions": null, "quorum": null}))
        .await;
    assert_eq!(status, StatusCode::OK, "{m}");
    assert_eq!(
        (&m["regions"], &m["quorum"]),
        (&json!(["eu", "us"]), &json!(2))
    );
    assert_eq!(stored(id).await, (None, None));

    // Turned into a heartbeat, the regions go; heartbeats show none.
    app.patch(&path, &key, json!({"regions": ["ap"], "quorum": 1}))
        .await;
    let (status, m) = app
        .patch(&path, &key, json!({"type": "heartbeat", "target": null}))
        .await;
    assert_eq!(status, StatusCode::OK, "{m}");
    assert_eq!((&m["regions"], &m["quorum"]), (&Value::Null, &Value::Null));
    assert_eq!(stored(id).await, (None, None));
    let (hb, _) = insert_heartbeat_monitor(&app.state.pool, user_id, 'a', true).await;
    let (_, m) = app.get(&format!("/api/v1/monitors/{}", hb.id), &key).await;
    assert_eq!((&m["regions"], &m["quorum"]), (&Value::Null, &Value::Null));
}

/// Stores a result as the recorder would, in `region` (None: recorded
/// before regions) and `round`.
async fn insert_regional_result(
    app: &TestApp,
    monitor_id: i64,
    checked_at: chrono::DateTime<Utc>,
    region: Option<&str>,
    round: Option<Uuid>,
) -> i64 {
    let id = insert_result(&app.state.pool, monitor_id, checked_at, "up", "scheduled").await;
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    diesel::update(check_results::table.filter(check_results::id.eq(id)))
        .set((
            check_results::region.eq(region),
            check_results::round_id.eq(round),
        ))
        .execute(&mut conn)
        .await
        .unwrap();
    id
}

#[tokio::test]
async fn results_name_their_region_and_round_and_filter_by_region() {
    let app = three_region_app().await;
    let (user_id, key) = app.new_user("ops").await;
    let monitor = insert_monitor(&app.state.pool, user_id, |_| {}).await;
    let round = Uuid::new_v4();
    let t = Utc::now() - Duration::minutes(10);
    let old = insert_regional_result(&app, monitor.id, t, None, None).await;
    let eu = insert_regional_result(
        &app,
        monitor.id,
        t + Duration::seconds(1),
        Some("eu"),
        Some(round),
    )
    .await;
    let us = insert_regional_result(
        &app,
        monitor.id,
        t + Duration::seconds(2),
        Some("us"),
        Some(round),
    )
    .await;
    let default = insert_regional_result(
        &app,
        monitor.id,
        t + Duration::seconds(3),
        Some("default"),
        None,
    )
    .await;

    let results = |query: &'static str| {
        let app = &app;
        let key = key.clone();
        async move {
            let (status, body) = app
                .get(
                    &format!("/api/v1/monitors/{}/results{query}", monitor.id),
                    &key,
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{query}: {body}");
            body["results"].as_array().unwrap().clone()
        }
    };
    let all = results("").await;
    let ids: Vec<i64> = all.iter().map(|r| r["id"].as_i64().unwrap()).collect();
    assert_eq!(ids, [default, us, eu, old]);
    assert_eq!(all[2]["region"], "eu");
    assert_eq!(all[2]["round_id"], json!(round));
    assert_eq!(all[3]["region"], "default", "NULL is the default region");
    assert_eq!(all[3]["round_id"], Value::Null);

    let ids_of = |rs: Vec<Value>| {
        rs.iter()
            .map(|r| r["id"].as_i64().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids_of(results("?region=eu").await), [eu]);
    assert_eq!(ids_of(results("?region=default").await), [default, old]);
    assert!(results("?region=ap").await.is_empty());
    assert_eq!(ids_of(results("?region=us&limit=1").await), [us]);

    let (status, body) = app
        .get(
            &format!("/api/v1/monitors/{}/results?region=EU.west", monitor.id),
            &key,
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["details"][0]["field"], "region", "{body}");
}

#[tokio::test]
async fn rounds_are_listed_newest_first_with_what_each_region_saw() {
    let app = three_region_app().await;
    let (user_id, key) = app.new_user("ops").await;
    let monitor = insert_monitor(&app.state.pool, user_id, |m| {
        m.regions = Some(["ap", "eu", "us"].map(String::from).to_vec());
        m.quorum = Some(2);
    })
    .await;
    let other = insert_monitor(&app.state.pool, user_id, |_| {}).await;
    let t = Utc::now() - Duration::minutes(5);
    let decided = Uuid::new_v4();
    let open = Uuid::new_v4();
    let decision = Round {
        round_id: decided,
        quorum: 2,
        regions: vec![
            RegionOutcome {
                region: "ap".into(),
                seen: RegionSeen::Offline,
                check_id: None,
                latency_ms: None,
                http_status: None,
                error: None,
            },
            RegionOutcome {
                region: "eu".into(),
                seen: RegionSeen::Failed,
                check_id: Some(Uuid::new_v4()),
                latency_ms: Some(5000),
                http_status: None,
                error: Some("timed out after 5 s".into()),
            },
            RegionOutcome {
                region: "us".into(),
                seen: RegionSeen::Passed,
                check_id: Some(Uuid::new_v4()),
                latency_ms: Some(80),
                http_status: Some(200),
                error: None,
            },
        ],
        note: Some("regional problem: eu failed".into()),
    };
    let us_answer = json!({
        "check_id": Uuid::new_v4(), "monitor_id": monitor.id, "definition_version": 1,
        "trigger": "scheduled", "checked_at": t + Duration::minutes(1), "outcome": "fail",
        "http_status": 503, "error": "expected status 204, got 503",
        "reporter": "checker-us", "region": "us", "round_id": open,
    });
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    for (round, monitor_id, due_at, answers, decided_at, verdict, decision) in [
        (
            decided,
            monitor.id,
            t,
            json!({}),
            Some(t + Duration::seconds(9)),
            Some("up"),
            Some(serde_json::to_value(&decision).unwrap()),
        ),
        (
            open,
            monitor.id,
            t + Duration::minutes(1),
            json!({"us": us_answer}),
            None,
            None,
            None,
        ),
        (Uuid::new_v4(), other.id, t, json!({}), None, None, None),
    ] {
        diesel::insert_into(check_rounds::table)
            .values((
                check_rounds::round_id.eq(round),
                check_rounds::monitor_id.eq(monitor_id),
                check_rounds::definition_version.eq(1),
                check_rounds::trigger.eq("scheduled"),
                check_rounds::due_at.eq(due_at),
                check_rounds::deadline_at.eq(due_at + Duration::seconds(12)),
                check_rounds::regions.eq(vec!["ap", "eu", "us"]),
                check_rounds::quorum.eq(2),
                check_rounds::answers.eq(answers),
                check_rounds::decided_at.eq(decided_at),
                check_rounds::verdict.eq(verdict),
                check_rounds::decision.eq(decision),
            ))
            .execute(&mut conn)
            .await
            .unwrap();
    }
    drop(conn);

    let path = format!("/api/v1/monitors/{}/rounds", monitor.id);
    let (status, body) = app.get(&path, &key).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let rounds = body["rounds"].as_array().unwrap();
    let ids: Vec<&str> = rounds
        .iter()
        .map(|r| r["round_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [open.to_string(), decided.to_string()],
        "newest first, this monitor's"
    );

    let open_round = &rounds[0];
    assert_eq!(open_round["decided_at"], Value::Null);
    assert_eq!(open_round["verdict"], Value::Null);
    let seen: Vec<(&str, &str)> = open_round["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["region"].as_str().unwrap(), r["seen"].as_str().unwrap()))
        .collect();
    assert_eq!(
        seen,
        [("ap", "pending"), ("eu", "pending"), ("us", "failed")]
    );
    assert_eq!(open_round["regions"][2]["http_status"], 503);

    let decided_round = &rounds[1];
    assert_eq!(decided_round["verdict"], "up");
    assert_eq!(decided_round["quorum"], 2);
    assert_eq!(decided_round["note"], "regional problem: eu failed");
    assert_eq!(decided_round["regions"][0]["seen"], "offline");
    assert_eq!(decided_round["regions"][1]["seen"], "failed");
    assert_eq!(decided_round["regions"][1]["error"], "timed out after 5 s");
    assert_eq!(decided_round["regions"][2]["latency_ms"], 80);

    let (status, body) = app.get(&format!("{path}?limit=1"), &key).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["rounds"].as_array().unwrap().len(), 1);
    let (status, _) = app.get(&format!("{path}?limit=0"), &key).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (other_user, other_key) = app.new_user("else").await;
    let _ = other_user;
    let (status, _) = app.get(&path, &other_key).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "another user's monitor");
}

#[tokio::test]
async fn the_document_states_the_regions_routes_and_bounds() {
    let app = three_region_app().await;
    let (_, doc) = app
        .call(Method::GET, "/api/v1/openapi.json", None, None)
        .await;
    for path in ["/api/v1/regions", "/api/v1/monitors/{id}/rounds"] {
        assert!(doc["paths"][path]["get"]["security"].is_array(), "{path}");
    }
    for schema in ["CreateMonitor", "UpdateMonitor"] {
        let props = &doc["components"]["schemas"][schema]["properties"];
        let regions = &props["regions"];
        assert_eq!(regions["maxItems"], 16, "{schema}: {regions}");
        assert_eq!(regions["uniqueItems"], true, "{schema}: {regions}");
        assert_eq!(
            regions["items"]["pattern"], "^[a-z0-9][a-z0-9-]{0,31}$",
            "{schema}: {regions}"
        );
        assert_eq!(props["quorum"]["minimum"], 1, "{schema}");
    }
    let results = &doc["paths"]["/api/v1/monitors/{id}/results"]["get"]["parameters"];
    assert!(
        results
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "region" && p["schema"]["pattern"].is_string()),
        "{results}"
    );
}
