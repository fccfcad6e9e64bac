//! PATCH: the contacts it links, what it changes and keeps, and when the
//! definition version moves.

use super::{assert_invalid, contact, create, http_monitor, with, MONITORS};
use crate::common::spawn_app;
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn alert_contacts_are_linked_sorted_and_must_be_the_callers() {
    let app = spawn_app().await;
    let (_, alice) = app.new_user("alice").await;
    let (_, bob) = app.new_user("bob").await;
    let a1 = contact(&app, &alice, "a1").await;
    let a2 = contact(&app, &alice, "a2").await;
    let b1 = contact(&app, &bob, "b1").await;

    let m = create(
        &app,
        &alice,
        with(http_monitor(), json!({"alert_contact_ids": [a2, a1, a2]})),
    )
    .await;
    assert_eq!(m["alert_contact_ids"], json!([a1, a2]));

    for ids in [json!([a1, b1]), json!([999_999]), json!([b1])] {
        let req = with(http_monitor(), json!({ "alert_contact_ids": ids }));
        let (status, body) = app.post(MONITORS, &alice, req.clone()).await;
        assert_invalid(status, &body, "alert_contact_ids", &req);
        let message = body["details"][0]["message"].as_str().unwrap();
        let unknown = ids
            .as_array()
            .unwrap()
            .iter()
            .find(|id| **id != json!(a1))
            .unwrap();
        assert!(message.contains(&unknown.to_string()), "{message}");
        assert!(!message.contains(&a1.to_string()), "{message}");
    }
    // Nothing was created by the refused requests.
    let (_, list) = app.get(MONITORS, &alice).await;
    assert_eq!(list["monitors"].as_array().unwrap().len(), 1);

    // PATCH replaces the set; [] clears it; another user's contact is refused.
    let path = format!("{MONITORS}/{}", m["id"]);
    let (status, patched) = app
        .patch(&path, &alice, json!({"alert_contact_ids": [a2]}))
        .await;
    assert_eq!(status, StatusCode::OK, "{patched}");
    assert_eq!(patched["alert_contact_ids"], json!([a2]));
    let req = json!({"alert_contact_ids": [b1]});
    let (status, body) = app.patch(&path, &alice, req.clone()).await;
    assert_invalid(status, &body, "alert_contact_ids", &req);
    let (_, patched) = app
        .patch(&path, &alice, json!({"alert_contact_ids": []}))
        .await;
    assert_eq!(patched["alert_contact_ids"], json!([]));

    // Deleting a contact unlinks it.
    app.patch(&path, &alice, json!({"alert_contact_ids": [a1, a2]}))
        .await;
    let (status, _) = app
        .delete(&format!("/api/v1/alert-contacts/{a1}"), &alice)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (_, got) = app.get(&path, &alice).await;
    assert_eq!(got["alert_contact_ids"], json!([a2]));
}

#[tokio::test]
async fn patch_changes_only_what_it_names_and_pauses_and_resumes() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let m = create(
        &app,
        &key,
        with(
            http_monitor(),
            json!({"latency_warn_ms": 800, "confirmation_count": 3}),
        ),
    )
    .await;
    let path = format!("{MONITORS}/{}", m["id"]);

    let (status, paused) = app.patch(&path, &key, json!({"active": false})).await;
    assert_eq!(status, StatusCode::OK, "{paused}");
    assert_eq!(paused["active"], false);
    for unchanged in [
        "name",
        "target",
        "interval_secs",
        "timeout_secs",
        "latency_warn_ms",
        "confirmation_count",
        "status",
        "created_at",
    ] {
        assert_eq!(paused[unchanged], m[unchanged], "{unchanged}");
    }
    assert!(paused["updated_at"].as_str().unwrap() >= m["updated_at"].as_str().unwrap());
    let (_, got) = app.get(&path, &key).await;
    assert_eq!(got["active"], false, "the pause is stored");

    let (_, resumed) = app.patch(&path, &key, json!({"active": true})).await;
    assert_eq!(resumed["active"], true);

    let (_, cleared) = app
        .patch(&path, &key, json!({"latency_warn_ms": null}))
        .await;
    assert!(cleared["latency_warn_ms"].is_null(), "{cleared}");
    assert_eq!(cleared["confirmation_count"], 3);

    let (_, renamed) = app
        .patch(
            &path,
            &key,
            json!({"name": "renamed", "expected_status": 204}),
        )
        .await;
    assert_eq!(renamed["name"], "renamed");
    assert_eq!(renamed["expected_status"], 204);
    assert!(
        renamed["latency_warn_ms"].is_null(),
        "earlier changes are kept"
    );

    // A shorter interval takes the stored timeout down with it...
    let (_, short) = app.patch(&path, &key, json!({"interval_secs": 15})).await;
    assert_eq!(
        (
            short["interval_secs"].as_i64(),
            short["timeout_secs"].as_i64()
        ),
        (Some(15), Some(15))
    );
    // ...but an explicit timeout above the interval is refused.
    let req = json!({"timeout_secs": 16});
    let (status, body) = app.patch(&path, &key, req.clone()).await;
    assert_invalid(status, &body, "timeout_secs", &req);

    // Fields that cannot be cleared refuse null; out-of-range values are refused.
    for (req, field) in [
        (json!({"name": null}), "name"),
        (json!({"interval_secs": null}), "interval_secs"),
        (json!({"active": null}), "active"),
        (json!({"target": null}), "target"),
        (json!({"confirmation_count": 11}), "confirmation_count"),
        (json!({"target": "gopher://e.com"}), "target"),
    ] {
        let (status, body) = app.patch(&path, &key, req.clone()).await;
        assert_invalid(status, &body, field, &req);
    }
    // A refused PATCH changed nothing.
    let (_, got) = app.get(&path, &key).await;
    assert_eq!(got["name"], "renamed");
    assert_eq!(got["target"], m["target"]);

    // An empty PATCH is a no-op that answers the monitor.
    let (status, same) = app.patch(&path, &key, json!({})).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(same["name"], "renamed");
}

#[tokio::test]
async fn patch_revalidates_type_changes_as_a_whole() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let m = create(&app, &key, http_monitor()).await;
    let path = format!("{MONITORS}/{}", m["id"]);

    let req = json!({"type": "keyword"});
    let (status, body) = app.patch(&path, &key, req.clone()).await;
    assert_invalid(status, &body, "keyword", &req);

    let (status, kw) = app
        .patch(
            &path,
            &key,
            json!({"type": "keyword", "keyword": "Welcome"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{kw}");
    assert_eq!(
        (kw["keyword"].as_str(), kw["keyword_type"].as_str()),
        (Some("Welcome"), Some("contains"))
    );

    let req = json!({"keyword": null});
    let (status, body) = app.patch(&path, &key, req.clone()).await;
    assert_invalid(status, &body, "keyword", &req);

    // Back to http: the keyword goes with the type.
    let (_, http) = app.patch(&path, &key, json!({"type": "http"})).await;
    assert!(
        http["keyword"].is_null() && http["keyword_type"].is_null(),
        "{http}"
    );

    // To heartbeat: a token appears (and stays); back to http: it goes.
    let (_, hb) = app.patch(&path, &key, json!({"type": "heartbeat"})).await;
    let token = hb["heartbeat_token"].as_str().expect("token").to_string();
    assert!(token.starts_with("hb_"));
    let (_, hb2) = app.patch(&path, &key, json!({"interval_secs": 60})).await;
    assert_eq!(hb2["heartbeat_token"], token.as_str());
    let (_, cleared) = app.patch(&path, &key, json!({"target": null})).await;
    assert!(
        cleared["target"].is_null(),
        "a heartbeat target can be cleared"
    );

    let req = json!({"type": "http"});
    let (status, body) = app.patch(&path, &key, req.clone()).await;
    assert_invalid(status, &body, "target", &req);
    let (_, http) = app
        .patch(
            &path,
            &key,
            json!({"type": "http", "target": "https://example.org"}),
        )
        .await;
    assert!(http["heartbeat_token"].is_null(), "{http}");
}

#[tokio::test]
async fn runtime_state_survives_edits_but_not_a_new_target() {
    use diesel_async::RunQueryDsl;
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let m = create(&app, &key, http_monitor()).await;
    let id = m["id"].as_i64().unwrap();
    let path = format!("{MONITORS}/{id}");

    // Play the recorder: the monitor is down after three failures.
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    diesel::sql_query(
        "UPDATE monitors SET status = 'down', consecutive_failures = 3, \
         last_checked_at = now(), ssl_expires_at = now() + interval '20 days' WHERE id = $1",
    )
    .bind::<diesel::sql_types::BigInt, _>(id)
    .execute(&mut conn)
    .await
    .unwrap();

    for patch in [
        json!({"name": "x"}),
        json!({"active": false}),
        json!({"active": true}),
        json!({"interval_secs": 60}),
    ] {
        let (_, got) = app.patch(&path, &key, patch.clone()).await;
        assert_eq!(got["status"], "down", "{patch}: {got}");
        assert_eq!(got["consecutive_failures"], 3);
        assert!(got["ssl_expires_at"].is_string());
    }
    let (_, moved) = app
        .patch(&path, &key, json!({"target": "https://example.net/"}))
        .await;
    assert_eq!(moved["status"], "pending", "{moved}");
    assert_eq!(moved["consecutive_failures"], 0);
    assert!(moved["ssl_expires_at"].is_null());
    assert!(moved["last_checked_at"].is_string(), "history is kept");
}

#[tokio::test]
async fn the_definition_version_goes_up_only_when_what_a_check_does_changes() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let m = create(&app, &key, http_monitor()).await;
    assert_eq!(m["definition_version"], 1, "{m}");
    let path = format!("{MONITORS}/{}", m["id"]);
    let other = contact(&app, &key, "ops").await;

    let mut expected = 1;
    for (patch, changes_checks) in [
        (json!({"name": "renamed"}), false),
        (json!({"active": false}), false),
        (json!({"active": true}), false),
        (json!({"interval_secs": 120}), false),
        (json!({"confirmation_count": 3}), false),
        (json!({"latency_warn_ms": 800}), false),
        (json!({"ssl_warn_days": 7}), false),
        (json!({"alert_contact_ids": [other]}), false),
        (json!({"target": "https://example.net/"}), true),
        (json!({"target": "https://example.net/"}), false),
        (json!({"timeout_secs": 5}), true),
        (json!({"expected_status": 204}), true),
        (json!({"type": "keyword", "keyword": "ok"}), true),
        (json!({"keyword": "healthy"}), true),
        (json!({"keyword_type": "not_contains"}), true),
    ] {
        let (status, got) = app.patch(&path, &key, patch.clone()).await;
        assert_eq!(status, StatusCode::OK, "{patch}: {got}");
        expected += i64::from(changes_checks);
        assert_eq!(got["definition_version"], expected, "{patch}: {got}");
    }

    let hb = create(
        &app,
        &key,
        json!({"name": "job", "type": "heartbeat", "interval_secs": 60}),
    )
    .await;
    let path = format!("{MONITORS}/{}", hb["id"]);
    let (_, got) = app.patch(&path, &key, json!({"interval_secs": 120})).await;
    assert_eq!(
        got["definition_version"], 2,
        "a heartbeat's period is what its missed-period checks judge: {got}"
    );
}
