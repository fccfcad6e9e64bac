//! `POST /api/v1/monitors/bulk`: many monitors in one request, all or
//! nothing, each validated as a single create, counted against the quota as
//! a whole and announced to the scheduler like single creates.

use crate::check_support::stream_messages;
use crate::common::{spawn_app, spawn_app_with, TestApp};
use diesel_async::RunQueryDsl;
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::time::{Duration, Instant};
use uptime_contracts::streams;

const MONITORS: &str = "/api/v1/monitors";
const BULK: &str = "/api/v1/monitors/bulk";

/// A monitor as a user would typically send it (about 150 bytes of JSON):
/// a thousand of them are well over the 64 KiB other bodies may have.
fn typical(i: usize) -> Value {
    json!({
        "name": format!("checkout api eu-west-{i}"),
        "type": "http",
        "target": format!("https://shop-{i}.example.com/health?region=eu-west"),
        "interval_secs": 60,
        "expected_status": 204,
    })
}

async fn contact(app: &TestApp, key: &str) -> i64 {
    let (status, c) = app
        .post(
            "/api/v1/alert-contacts",
            key,
            json!({"name": "ops", "type": "slack", "value": "https://hooks.slack.com/services/T/B/x"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{c}");
    c["id"].as_i64().unwrap()
}

/// Every monitor of the caller, through the paged list.
async fn all_monitors(app: &TestApp, key: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            None => format!("{MONITORS}?limit=100"),
            Some(c) => format!("{MONITORS}?limit=100&cursor={c}"),
        };
        let (status, page) = app.get(&path, key).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        out.extend(page["monitors"].as_array().unwrap().iter().cloned());
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => return out,
        }
    }
}

/// The `monitors.changed` messages in the stream, as (monitor id, change).
async fn announced(app: &TestApp) -> Vec<(i64, String, Option<String>)> {
    let (_client, js) = app.env.nats.jetstream().await;
    stream_messages(&js, streams::MONITORS_STREAM)
        .await
        .into_iter()
        .map(|(_, msg_id, m)| {
            (
                m["monitor_id"].as_i64().unwrap(),
                m["change"].as_str().unwrap().to_string(),
                msg_id,
            )
        })
        .collect()
}

fn fields(body: &Value) -> Vec<String> {
    body["details"]
        .as_array()
        .unwrap_or_else(|| panic!("details in {body}"))
        .iter()
        .map(|d| d["field"].as_str().unwrap().to_string())
        .collect()
}

fn message_of<'a>(body: &'a Value, field: &str) -> &'a str {
    body["details"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["field"] == field)
        .unwrap_or_else(|| panic!("{field} in {body}"))["message"]
        .as_str()
        .unwrap()
}

#[tokio::test]
async fn bulk_create_makes_a_full_batch_in_request_order_and_announces_each() {
    let app = spawn_app().await;
    let (user_id, key) = app.new_user("ops").await;
    let contact_id = contact(&app, &key).await;

    // A full batch (the default maximum) of typical monitors, some of every
    // type, two with a contact.
    let mut items: Vec<Value> = (0..1000).map(typical).collect();
    items[1] = json!({"name": "nightly backup", "type": "heartbeat", "interval_secs": 86400});
    items[2] = json!({"name": "shop", "type": "keyword", "target": "https://shop.example.com/",
                      "keyword": "Add to cart", "alert_contact_ids": [contact_id, contact_id]});
    items[3] = json!({"name": "paused", "type": "http", "target": "https://p.example.com/",
                      "active": false, "alert_contact_ids": [contact_id]});
    let body = json!({ "monitors": items });
    assert!(
        body.to_string().len() > 64 * 1024,
        "the batch must not fit the usual limit"
    );

    let (status, created) = app.post(BULK, &key, body).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let created = created["monitors"].as_array().expect("monitors").clone();
    assert_eq!(created.len(), 1000);

    // In request order, each as its single create would have made it.
    for (i, (m, item)) in created.iter().zip(&items).enumerate() {
        assert_eq!(m["name"], item["name"], "item {i}");
        assert_eq!(m["user_id"], user_id);
    }
    for i in [0, 1, 2, 3] {
        let (status, single) = app.post(MONITORS, &key, items[i].clone()).await;
        assert_eq!(status, StatusCode::CREATED, "{single}");
        let mut bulk = created[i].clone();
        let mut single = single;
        for volatile in [
            "id",
            "created_at",
            "updated_at",
            "heartbeat_token",
            "next_expected_at",
        ] {
            assert_eq!(
                bulk[volatile].is_null(),
                single[volatile].is_null(),
                "{volatile} of item {i}"
            );
            bulk[volatile] = Value::Null;
            single[volatile] = Value::Null;
        }
        assert_eq!(bulk, single, "item {i} as a single create");
    }
    assert_eq!(created[2]["alert_contact_ids"], json!([contact_id]));
    assert!(created[1]["heartbeat_token"]
        .as_str()
        .unwrap()
        .starts_with("hb_"));

    // All there, exactly as answered.
    let ids: Vec<i64> = created.iter().map(|m| m["id"].as_i64().unwrap()).collect();
    let stored = all_monitors(&app, &key).await;
    let stored: Vec<&Value> = stored
        .iter()
        .filter(|m| ids.contains(&m["id"].as_i64().unwrap()))
        .collect();
    assert_eq!(stored.len(), 1000);
    for m in &stored {
        let i = ids.iter().position(|id| *id == m["id"]).unwrap();
        assert_eq!(*m, &created[i]);
    }

    // Each one announced to the scheduler under a message id of its own, as
    // single creates are, and visible to its reads (the paused one is not
    // scheduled).
    let events = announced(&app).await;
    let announced_ids: HashSet<i64> = events
        .iter()
        .filter(|(_, change, _)| change == "upserted")
        .map(|(id, _, _)| *id)
        .collect();
    for id in &ids {
        assert!(announced_ids.contains(id), "monitor {id} not announced");
    }
    let msg_ids: HashSet<&Option<String>> = events.iter().map(|(_, _, m)| m).collect();
    assert_eq!(msg_ids.len(), events.len(), "one message id per change");
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    let timings = uptime_db::schedule::active_timings_by_ids(&mut conn, &ids)
        .await
        .unwrap();
    assert_eq!(timings.len(), 999, "every active one is schedulable");
    assert!(timings.iter().all(|t| t.id != ids[3]));
}

#[tokio::test]
async fn bulk_create_with_bad_items_answers_400_naming_each_index_and_creates_nothing() {
    let app = spawn_app_with(|s| s.safety.allow_private_targets = false).await;
    let (_, key) = app.new_user("ops").await;

    let bad_target = json!({"name": "a", "type": "http", "target": "ftp://example.com/"});
    let bad_two = json!({"name": "b", "type": "http", "target": "https://example.com/",
                         "interval_secs": 5, "keyword": "x"});
    let private = json!({"name": "c", "type": "http", "target": "http://10.0.0.1/"});
    let mut items: Vec<Value> = (0..10).map(typical).collect();
    items[3] = bad_target.clone();
    items[5] = bad_two.clone();
    items[6] = private.clone();
    items[8] =
        json!({"name": "d", "type": "http", "target": "https://e.com/", "interval_secs": "often"});
    items[9] = json!({"name": "e", "type": "smoke-signal"});
    let (status, body) = app.post(BULK, &key, json!({ "monitors": items })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"], "invalid request body", "{body}");
    let mut got = fields(&body);
    got.sort();
    assert_eq!(
        got,
        vec![
            "monitors[3].target",
            "monitors[5].interval_secs",
            "monitors[5].keyword",
            "monitors[6].target",
            "monitors[8]",
            "monitors[9]",
        ],
        "{body}"
    );
    // The same words as the single create's for the same monitor.
    for (i, item, field) in [
        (3, &bad_target, "target"),
        (5, &bad_two, "interval_secs"),
        (5, &bad_two, "keyword"),
        (6, &private, "target"),
    ] {
        let (status, single) = app.post(MONITORS, &key, item.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{single}");
        assert_eq!(
            message_of(&body, &format!("monitors[{i}].{field}")),
            message_of(&single, field)
        );
    }
    assert!(
        message_of(&body, "monitors[8]").contains("invalid type"),
        "{body}"
    );

    // An alert contact that is not the caller's, on one item.
    let mut items: Vec<Value> = (0..4).map(typical).collect();
    items[2]["alert_contact_ids"] = json!([424242]);
    let (status, body) = app.post(BULK, &key, json!({ "monitors": items })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(
        body["details"],
        json!([{"field": "monitors[2].alert_contact_ids",
                "message": "no such alert contact: 424242"}])
    );

    assert!(all_monitors(&app, &key).await.is_empty(), "nothing created");
    assert!(announced(&app).await.is_empty(), "nothing announced");
}

/// 999 bad items make thousands of problems: the answer lists the first
/// hundred and counts the others instead of growing with them.
#[tokio::test]
async fn a_refusal_lists_the_first_hundred_problems_and_counts_the_rest() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let bad =
        json!({"name": "", "type": "http", "target": "ftp://example.com/", "interval_secs": 1});
    let (status, single) = app.post(MONITORS, &key, bad.clone()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{single}");
    let per_item = fields(&single).len();
    assert!(per_item >= 2, "{single}");

    let (status, body) = app
        .post(BULK, &key, json!({"monitors": vec![bad; 999]}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let details = body["details"].as_array().unwrap();
    assert_eq!(details.len(), 101);
    assert!(fields(&body)[..100]
        .iter()
        .all(|f| f.starts_with("monitors[")));
    assert_eq!(
        details[100],
        json!({"field": "monitors",
               "message": format!("{} more problems not listed (the first 100 are)", 999 * per_item - 100)})
    );
}

#[tokio::test]
async fn bulk_create_past_the_quota_is_refused_as_a_whole() {
    let app = spawn_app_with(|s| s.quotas.monitors = 5).await;
    let (_, key) = app.new_user("ops").await;
    for i in 0..2 {
        let (status, body) = app.post(MONITORS, &key, typical(i)).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }

    let four: Vec<Value> = (10..14).map(typical).collect();
    let (status, body) = app.post(BULK, &key, json!({ "monitors": four })).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(
        body,
        json!({"error": "quota exceeded",
               "details": [{"field": "monitors", "message": "at most 5 monitors per organisation"}]})
    );
    assert_eq!(all_monitors(&app, &key).await.len(), 2, "none of the four");

    let three: Vec<Value> = (10..13).map(typical).collect();
    let (status, body) = app.post(BULK, &key, json!({ "monitors": three })).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(all_monitors(&app, &key).await.len(), 5);
    let (status, body) = app.post(MONITORS, &key, typical(99)).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
}

#[tokio::test]
async fn bulk_create_refuses_an_empty_or_too_long_list_with_400() {
    let app = spawn_app_with(|s| s.bulk_create.max_items = 3).await;
    let (_, key) = app.new_user("ops").await;

    let (status, body) = app.post(BULK, &key, json!({"monitors": []})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(
        body,
        json!({"error": "invalid request body",
               "details": [{"field": "monitors", "message": "must hold 1 to 3 monitors"}]})
    );
    let four: Vec<Value> = (0..4).map(typical).collect();
    let (status, body) = app.post(BULK, &key, json!({ "monitors": four })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(
        message_of(&body, "monitors"),
        "must hold 1 to 3 monitors",
        "{body}"
    );
    assert!(all_monitors(&app, &key).await.is_empty());

    // U+0000 anywhere is the API-wide 400 (PostgreSQL cannot store it),
    // named by its path, and never reaches the database.
    let mut nul: Vec<Value> = (0..2).map(typical).collect();
    nul[1]["name"] = json!("a\u{0}b");
    let (status, body) = app.post(BULK, &key, json!({ "monitors": nul })).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["details"][0]["field"], "monitors[1].name", "{body}");

    // Not a list of monitors at all: a 400 like any unreadable body.
    for bad in [json!({}), json!({"monitors": {}}), json!([typical(0)])] {
        let (status, body) = app.post(BULK, &key, bad.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad} -> {body}");
        assert_eq!(body["error"], "invalid request body");
    }

    let three: Vec<Value> = (0..3).map(typical).collect();
    let (status, body) = app.post(BULK, &key, json!({ "monitors": three })).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, _) = app
        .call(
            reqwest::Method::POST,
            BULK,
            None,
            Some(json!({"monitors": []})),
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

/// Concurrent bulk creates of one user are counted one after the other: the
/// test holds the user's row, lets every request reach it, then lets go.
#[tokio::test]
async fn concurrent_bulk_creates_cannot_pass_the_quota_together() {
    let app = spawn_app_with(|s| s.quotas.monitors = 7).await;
    let (user_id, key) = app.new_user("ops").await;
    let mut holder = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    diesel::sql_query("BEGIN")
        .execute(&mut holder)
        .await
        .unwrap();
    diesel::sql_query(format!(
        "SELECT id FROM organisations WHERE id = {user_id} FOR UPDATE"
    ))
    .execute(&mut holder)
    .await
    .unwrap();

    let requests: Vec<_> = (0..4)
        .map(|r| {
            let items: Vec<Value> = (0..3).map(|i| typical(r * 10 + i)).collect();
            let client = app.client.clone();
            let url = app.url(BULK);
            let key = key.clone();
            tokio::spawn(async move {
                let res = client
                    .post(url)
                    .bearer_auth(key)
                    .json(&json!({ "monitors": items }))
                    .send()
                    .await
                    .unwrap();
                res.status()
            })
        })
        .collect();

    // Every request waits on the user's row before it counts.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        #[derive(diesel::QueryableByName)]
        struct Waiting {
            #[diesel(sql_type = diesel::sql_types::Int8)]
            n: i64,
        }
        let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
        let waiting: Waiting = diesel::sql_query(
            "SELECT count(*) AS n FROM pg_stat_activity \
             WHERE datname = current_database() AND wait_event_type = 'Lock'",
        )
        .get_result(&mut conn)
        .await
        .unwrap();
        if waiting.n == 4 {
            break;
        }
        assert!(
            requests.iter().all(|r| !r.is_finished()),
            "a request finished while the user's row was held"
        );
        assert!(Instant::now() < deadline, "{} of 4 waiting", waiting.n);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    diesel::sql_query("COMMIT")
        .execute(&mut holder)
        .await
        .unwrap();
    drop(holder);

    let mut statuses = Vec::new();
    for r in requests {
        statuses.push(r.await.unwrap());
    }
    let created = statuses
        .iter()
        .filter(|s| **s == StatusCode::CREATED)
        .count();
    let refused = statuses
        .iter()
        .filter(|s| **s == StatusCode::FORBIDDEN)
        .count();
    assert_eq!((created, refused), (2, 2), "{statuses:?}");
    assert_eq!(all_monitors(&app, &key).await.len(), 6);
}
