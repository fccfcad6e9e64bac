//! Rows tests start from, written once: a valid monitor definition and its
//! insert. Tests change what they care about with struct-update syntax
//! (`MonitorDefinition { timeout_secs: 7, ..monitor_definition(kind) }`).

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use uptime_contracts::MonitorKind;
use uptime_db::models::{Monitor, MonitorDefinition, NewAlertContact, NewMonitor};
use uptime_db::schema::{monitor_alert_contacts, monitors};

/// A definition the API would accept: an http or keyword monitor of
/// `https://example.com/health` (keyword `ok`, contains), a tcp or tls
/// monitor of `example.com:443`, a dns monitor of `example.com` (an A
/// query), an icmp monitor of `example.com`, or a heartbeat
/// monitor with a fresh token; every minute, 10 s timeout (a heartbeat's
/// grace), confirmed by one check, active.
pub fn monitor_definition(kind: MonitorKind) -> MonitorDefinition {
    let heartbeat = kind == MonitorKind::Heartbeat;
    let keyword = kind == MonitorKind::Keyword;
    MonitorDefinition {
        name: "site".into(),
        kind,
        target: match kind {
            MonitorKind::Heartbeat => None,
            MonitorKind::Http | MonitorKind::Keyword => Some("https://example.com/health".into()),
            MonitorKind::Tcp | MonitorKind::Tls => Some("example.com:443".into()),
            MonitorKind::Dns | MonitorKind::Icmp => Some("example.com".into()),
        },
        interval_secs: 60,
        timeout_secs: 10,
        keyword: keyword.then(|| "ok".into()),
        keyword_type: keyword.then(|| "contains".into()),
        expected_status: 200,
        confirmation_count: 1,
        ssl_warn_days: 30,
        latency_warn_ms: None,
        heartbeat_token: heartbeat.then(|| format!("hb_{}", uuid::Uuid::new_v4().simple())),
        active: true,
        check_options: None,
        http_password_sealed: None,
        heartbeat_schedule: None,
        heartbeat_timezone: None,
        regions: None,
        quorum: None,
        // What the API writes for it with one default region. A test that
        // changes the interval or regions and cares about the load sets it.
        check_load_millis: uptime_db::quotas::check_load_millis(kind, 60, 1),
    }
}

/// Inserts `definition` as a monitor of organisation `org_id` and returns the row.
pub async fn insert_monitor(
    conn: &mut diesel_async::AsyncPgConnection,
    org_id: i64,
    definition: MonitorDefinition,
) -> Monitor {
    diesel::insert_into(monitors::table)
        .values(NewMonitor { org_id, definition })
        .returning(Monitor::as_returning())
        .get_result(conn)
        .await
        .expect("insert monitor")
}

/// Inserts `definition` as a monitor of organisation `org_id` that alerts
/// `contact_id`; its id. Errors are returned, not panicked on: benchmarks
/// seed thousands of these and report what failed.
pub async fn insert_alerting_monitor(
    conn: &mut diesel_async::AsyncPgConnection,
    org_id: i64,
    definition: MonitorDefinition,
    contact_id: i64,
) -> diesel::QueryResult<i64> {
    let id: i64 = diesel::insert_into(monitors::table)
        .values(NewMonitor { org_id, definition })
        .returning(monitors::id)
        .get_result(conn)
        .await?;
    diesel::insert_into(monitor_alert_contacts::table)
        .values((
            monitor_alert_contacts::monitor_id.eq(id),
            monitor_alert_contacts::contact_id.eq(contact_id),
        ))
        .execute(conn)
        .await?;
    Ok(id)
}

/// A verified webhook contact of organisation `org_id` named `name`,
/// posting to `url`, signed with the Standard Webhooks specification's
/// example secret: a receiver a test can alert at once.
pub fn webhook_contact(org_id: i64, name: String, url: String) -> NewAlertContact {
    NewAlertContact {
        org_id,
        kind: "webhook".into(),
        name,
        value: url,
        verified: true,
        verification_token_sha256: None,
        signing_secret: Some("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".into()),
        secret_sealed: None,
        options: serde_json::json!({}),
        event_kinds: None,
        min_severity: 0,
    }
}
