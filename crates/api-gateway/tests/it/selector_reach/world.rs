//! The world the selector test probes: two organisations, a key limited
//! to `team=payments`, and everything of a `team=search` monitor.

use crate::common::TestApp;
use reqwest::StatusCode;
use serde_json::{json, Value};
use uptime_db::incidents::{IncidentAlert, NewIncident};
use uuid::Uuid;

/// The outside monitor's ref, window's and page's.
pub const OUTSIDE_REF: &str = "search-api";
pub const OUTSIDE_WINDOW_REF: &str = "search-window";
pub const OUTSIDE_PAGE_REF: &str = "search-page";
/// The refs of the selector key's own monitor, window and page.
pub const OWN_REF: &str = "payments-api";
pub const OWN_WINDOW_REF: &str = "payments-window";
pub const OWN_PAGE_REF: &str = "payments-page";

/// Organisation A: an unlimited key, a `team=payments` key, one monitor of
/// each team and everything of the outside (`team=search`) monitor.
/// Organisation B: a key, its own monitor and contact.
pub struct World {
    /// A's owner, unlimited.
    pub full: String,
    /// A's owner's key limited to `team=payments`, admin scope (so no
    /// route refuses it for its scope).
    pub scoped: String,
    /// B's owner.
    pub other: String,
    /// The selector key's own monitor (team=payments).
    pub own_monitor: i64,
    /// B's monitor: what B's key uses where the selector key uses its own.
    pub other_monitor: i64,
    /// The contact of A both monitors alert.
    pub contact: i64,
    pub outside: i64,
    pub outside_incident: Uuid,
    /// An incident of its own monitor, held behind the outside one (which
    /// a key without a selector made it depend on).
    pub own_incident: Uuid,
    pub outside_window: i64,
    pub outside_page: i64,
    pub outside_notice: i64,
}

pub fn ids_in(page: &Value, list: &str, field: &str) -> Vec<i64> {
    page[list]
        .as_array()
        .unwrap_or_else(|| panic!("{list} in {page}"))
        .iter()
        .filter_map(|item| item[field].as_i64())
        .collect()
}

async fn created(app: &TestApp, key: &str, path: &str, body: Value) -> Value {
    let (status, answer) = app.post(path, key, body).await;
    assert_eq!(status, StatusCode::CREATED, "{path}: {answer}");
    answer
}

pub async fn world(app: &TestApp) -> World {
    let (org, full) = app.new_user("acme").await;
    let (_, other) = app.new_user("rival").await;
    let scoped = created(
        app,
        &full,
        "/api/v1/api-keys",
        json!({"name": "payments", "label_selector": {"team": "payments"}}),
    )
    .await["key"]
        .as_str()
        .unwrap()
        .to_string();
    let webhook =
        |name: &str| json!({"name": name, "type": "webhook", "value": "http://127.0.0.1:9/hook"});
    let contact = created(app, &full, "/api/v1/alert-contacts", webhook("a")).await["id"]
        .as_i64()
        .unwrap();
    let other_contact: i64 = created(app, &other, "/api/v1/alert-contacts", webhook("b")).await
        ["id"]
        .as_i64()
        .unwrap();
    let monitor = |labels: Value, r#ref: &str, contact: i64| {
        json!({"name": r#ref, "type": "tcp", "target": "127.0.0.1:9", "labels": labels,
            "ref": r#ref, "alert_contact_ids": [contact]})
    };
    let own_monitor = created(
        app,
        &full,
        "/api/v1/monitors",
        monitor(json!({"team": "payments"}), OWN_REF, contact),
    )
    .await["id"]
        .as_i64()
        .unwrap();
    let outside = created(
        app,
        &full,
        "/api/v1/monitors",
        monitor(json!({"team": "search"}), OUTSIDE_REF, contact),
    )
    .await["id"]
        .as_i64()
        .unwrap();
    let other_monitor = created(
        app,
        &other,
        "/api/v1/monitors",
        monitor(json!({"team": "payments"}), OWN_REF, other_contact),
    )
    .await["id"]
        .as_i64()
        .unwrap();
    let (status, badge) = app
        .post(
            &format!("/api/v1/monitors/{outside}/badge-token"),
            &full,
            json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{badge}");
    let outside_window = created(
        app,
        &full,
        "/api/v1/maintenance-windows",
        json!({"name": "search upgrade", "monitor_ids": [outside], "duration_minutes": 60,
            "ref": OUTSIDE_WINDOW_REF}),
    )
    .await["id"]
        .as_i64()
        .unwrap();
    let outside_page = created(
        app,
        &full,
        "/api/v1/status-pages",
        json!({"slug": "search-status", "title": "Search", "ref": OUTSIDE_PAGE_REF,
            "groups": [{"name": "Search", "monitor_ids": [outside]}]}),
    )
    .await["id"]
        .as_i64()
        .unwrap();
    // The selector key's own window and page, whose refs it may clash with.
    created(
        app,
        &scoped,
        "/api/v1/maintenance-windows",
        json!({"name": "payments deploy", "label_selector": {"team": "payments"},
            "duration_minutes": 60, "ref": OWN_WINDOW_REF}),
    )
    .await;
    created(
        app,
        &scoped,
        "/api/v1/status-pages",
        json!({"slug": "payments-status", "title": "Payments", "ref": OWN_PAGE_REF,
            "groups": [{"name": "Payments", "selector": {"team": "payments"}}]}),
    )
    .await;
    let outside_notice = created(
        app,
        &full,
        &format!("/api/v1/status-pages/{outside_page}/notices"),
        json!({"title": "Slow search", "body": "Looking."}),
    )
    .await["id"]
        .as_i64()
        .unwrap();

    // An incident of the outside monitor, as the recorder opens one, and its
    // alert to the shared contact, as the notifier's intake writes it.
    let outside_incident = Uuid::new_v4();
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    let event_id = Uuid::new_v4();
    uptime_db::incidents::open(
        &mut conn,
        &[NewIncident {
            id: outside_incident,
            org_id: org,
            monitor_id: outside,
            started_at: chrono::Utc::now(),
            resolved_at: None,
            cause: Some("connection refused".into()),
            alerts: vec![IncidentAlert {
                event_id,
                kind: "transition".into(),
                status: "down".into(),
                at: chrono::Utc::now(),
                held: None,
            }],
        }],
    )
    .await
    .unwrap();
    let own_incident = Uuid::new_v4();
    uptime_db::incidents::open(
        &mut conn,
        &[NewIncident {
            id: own_incident,
            org_id: org,
            monitor_id: own_monitor,
            started_at: chrono::Utc::now(),
            resolved_at: None,
            cause: None,
            alerts: vec![],
        }],
    )
    .await
    .unwrap();
    {
        use diesel::prelude::*;
        use diesel_async::RunQueryDsl;
        use uptime_db::schema::incidents;
        diesel::update(incidents::table.filter(incidents::id.eq(own_incident)))
            .set(incidents::blocked_by.eq(vec![outside]))
            .execute(&mut conn)
            .await
            .unwrap();
    }
    uptime_db::deliveries::intake::create_for_events(
        &mut conn,
        &[uptime_db::deliveries::intake::IntakeEvent {
            event_id,
            monitor_id: outside,
            event_type: "monitor.down".into(),
            payload: "{}".into(),
            severity: 2,
            incident_id: Some(outside_incident),
            escalates: false,
        }],
    )
    .await
    .unwrap();
    World {
        full,
        scoped,
        other,
        own_monitor,
        other_monitor,
        contact,
        outside,
        outside_incident,
        own_incident,
        outside_window,
        outside_page,
        outside_notice,
    }
}
