//! The reconcile against a real api-gateway: custom resources become API
//! resources through `PUT .../by-ref/{namespace}.{name}`, edits update them
//! in place, deletion removes them, and the status says what happened.

use crate::memory::MemoryCluster;
use api_gateway::settings::GatewaySettings;
use api_gateway::startup::Application;
use chrono::{DateTime, Utc};
use serde_json::{json, Value};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use uptime_operator::plan::{ready_condition, Kind, ResourceView};
use uptime_operator::reconcile::Reconciler;
use uptime_operator::resources::{ResourceStatus, SecretField, SecretKeyRef};
use uptime_testkit::TestEnv;

const ROUTING_KEY: &str = "R0UT1NGKEY0123456789abcdefABCDEF";

struct Harness {
    base: String,
    pool: uptime_db::Pool,
    key: String,
    operator: Reconciler<MemoryCluster>,
    _env: TestEnv,
    stop: CancellationToken,
}

impl Drop for Harness {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn harness() -> Harness {
    let env = TestEnv::start().await;
    let mut settings = GatewaySettings::default();
    settings.http.listen = "127.0.0.1:0".into();
    settings.http.workers = 1;
    settings.database = env.db.settings();
    settings.nats = env.nats.settings();
    settings.rate_limit.per_second = 0;
    settings.secrets = uptime_testkit::secrets::test_secrets();
    let app = Application::build(settings).await.expect("gateway builds");
    let base = format!("http://{}", app.addr());
    let pool = app.state().pool.clone();
    let (_, key) = api_gateway::keys::create_user_with_key(&app.state().pool, "operator")
        .await
        .expect("a user");
    let stop = CancellationToken::new();
    tokio::spawn(app.run_until(stop.clone()));
    let mut operator_settings = uptime_operator::settings::OperatorSettings::default();
    operator_settings.operator.api_url = base.clone();
    operator_settings.operator.api_key = key.clone();
    let operator = uptime_operator::reconciler(&operator_settings, MemoryCluster::default())
        .expect("a reconciler");
    Harness {
        base,
        pool,
        key,
        operator,
        _env: env,
        stop,
    }
}

impl Harness {
    fn cluster(&self) -> &MemoryCluster {
        &self.operator.cluster
    }

    /// One visit of `view` at `now`, then what the cluster holds after it
    /// copied back into `view` (as the next watch event would bring it).
    async fn visit(&self, view: &mut ResourceView, now: DateTime<Utc>) -> Option<Duration> {
        let next = self
            .operator
            .reconcile(view.clone(), now)
            .await
            .expect("reconciles");
        view.has_finalizer = self.cluster().has_finalizer(view);
        view.status = self.cluster().status(view).unwrap_or_default();
        next
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        let res = reqwest::Client::new()
            .get(format!("{}{path}", self.base))
            .bearer_auth(&self.key)
            .send()
            .await
            .unwrap();
        let status = res.status().as_u16();
        (status, res.json().await.unwrap_or(Value::Null))
    }
}

fn resource(kind: Kind, name: &str, body: Value) -> ResourceView {
    let Value::Object(body) = body else {
        panic!("an object")
    };
    ResourceView {
        kind,
        namespace: "payments".into(),
        name: name.into(),
        uid: None,
        generation: Some(1),
        deleting: false,
        has_finalizer: false,
        body,
        secret_fields: Vec::new(),
        status: ResourceStatus::default(),
    }
}

fn pager_contact() -> ResourceView {
    let mut contact = resource(
        Kind::AlertContact,
        "pager",
        json!({"name": "Pager", "type": "pagerduty"}),
    );
    contact.secret_fields = vec![SecretField {
        field: "secret".into(),
        secret_key_ref: SecretKeyRef {
            name: "pagerduty".into(),
            key: "routing-key".into(),
        },
    }];
    contact
}

fn ready(view: &ResourceView) -> (String, String, String) {
    let c = ready_condition(&view.status).expect("a Ready condition");
    (c.status.clone(), c.reason.clone(), c.message.clone())
}

#[tokio::test]
async fn a_new_resource_creates_it_and_an_edit_updates_it_in_place() {
    let h = harness().await;
    let now = Utc::now();
    h.cluster()
        .put_secret("payments", "pagerduty", "routing-key", ROUTING_KEY);
    let mut contact = pager_contact();
    h.visit(&mut contact, now).await;
    assert!(contact.has_finalizer, "the finalizer comes first");
    assert_eq!(ready(&contact).0, "True", "{:?}", contact.status);
    let contact_id = contact.status.id.expect("the contact's id");
    assert_eq!(contact.status.api_ref.as_deref(), Some("payments.pager"));

    let mut monitor = resource(
        Kind::Monitor,
        "api",
        json!({"name": "Payments API", "type": "http", "target": "https://example.com/pay",
               "interval_secs": 300, "alert_contact_refs": ["pager"]}),
    );
    let next = h.visit(&mut monitor, now).await;
    assert_eq!(next, Some(h.operator.timing.observe_every));
    let status = monitor.status.clone();
    assert_eq!(ready(&monitor).0, "True", "{status:?}");
    assert_eq!(status.observed_generation, Some(1));
    assert_eq!(status.state.as_deref(), Some("pending"), "not checked yet");
    assert_eq!(status.open_incident_id, None);
    let id = status.id.expect("the monitor's id");
    let (code, shown) = h.get(&format!("/api/v1/monitors/{id}")).await;
    assert_eq!(code, 200);
    assert_eq!(shown["name"], "Payments API");
    assert_eq!(shown["ref"], "payments.api");
    assert_eq!(shown["interval_secs"], 300);
    assert_eq!(shown["alert_contact_ids"], json!([contact_id]));
    assert!(h
        .cluster()
        .events(&monitor)
        .iter()
        .any(|e| e.reason == "Applied" && !e.warning));

    // A visit with nothing new only reads the state: the same status.
    h.visit(&mut monitor, now + chrono::Duration::seconds(60))
        .await;
    assert_eq!(monitor.status.id, Some(id));
    assert_eq!(monitor.status.last_applied_at, status.last_applied_at);

    // An edit: the same monitor, the new interval and name.
    monitor.body.insert("interval_secs".into(), json!(120));
    monitor
        .body
        .insert("name".into(), json!("Payments API (v2)"));
    monitor.generation = Some(2);
    h.visit(&mut monitor, now + chrono::Duration::seconds(61))
        .await;
    assert_eq!(monitor.status.id, Some(id), "updated in place");
    assert_eq!(monitor.status.observed_generation, Some(2));
    let (_, shown) = h.get(&format!("/api/v1/monitors/{id}")).await;
    assert_eq!(shown["interval_secs"], 120);
    assert_eq!(shown["name"], "Payments API (v2)");
    let (_, list) = h.get("/api/v1/monitors").await;
    assert_eq!(list["monitors"].as_array().map(Vec::len), Some(1), "{list}");
}

#[tokio::test]
async fn deleting_the_resource_deletes_the_monitor_then_releases_it() {
    let h = harness().await;
    let now = Utc::now();
    let mut monitor = resource(
        Kind::Monitor,
        "web",
        json!({"name": "Web", "type": "http", "target": "https://example.com"}),
    );
    h.visit(&mut monitor, now).await;
    let id = monitor.status.id.expect("created");
    monitor.deleting = true;
    let next = h.visit(&mut monitor, now).await;
    assert_eq!(next, None);
    assert!(!monitor.has_finalizer, "released");
    let (code, _) = h.get(&format!("/api/v1/monitors/{id}")).await;
    assert_eq!(code, 404);

    // A resource deleted before its id reached the status is found by ref.
    let mut lost = resource(
        Kind::Monitor,
        "lost",
        json!({"name": "Lost", "type": "http", "target": "https://example.com"}),
    );
    h.visit(&mut lost, now).await;
    let lost_id = lost.status.id.expect("created");
    lost.status = ResourceStatus::default();
    lost.deleting = true;
    h.visit(&mut lost, now).await;
    assert!(!lost.has_finalizer);
    let (code, _) = h.get(&format!("/api/v1/monitors/{lost_id}")).await;
    assert_eq!(code, 404);
}

/// The lookup behind a deletion without a known id: one `GET
/// .../by-ref/{ref}` per kind, a ref of the other kind or of nothing is
/// none.
#[tokio::test]
async fn a_ref_is_looked_up_by_its_own_route_per_kind() {
    let h = harness().await;
    let now = Utc::now();
    let mut monitor = resource(
        Kind::Monitor,
        "shared",
        json!({"name": "Shared", "type": "tcp", "target": "example.com:22"}),
    );
    h.visit(&mut monitor, now).await;
    let monitor_id = monitor.status.id.expect("created");
    let mut contact = resource(
        Kind::AlertContact,
        "shared",
        json!({"name": "Hook", "type": "webhook", "value": "https://example.com/hook"}),
    );
    h.visit(&mut contact, now).await;
    let contact_id = contact.status.id.expect("created");

    let gateway =
        uptime_operator::gateway::Gateway::new(&h.base, &h.key, Duration::from_secs(10)).unwrap();
    let found = |kind, api_ref: &'static str| {
        let gateway = gateway.clone();
        async move { gateway.find_by_ref(kind, api_ref).await.expect("answered") }
    };
    assert_eq!(
        found(Kind::Monitor, "payments.shared").await,
        Some(monitor_id)
    );
    assert_eq!(
        found(Kind::AlertContact, "payments.shared").await,
        Some(contact_id)
    );
    assert_eq!(found(Kind::Monitor, "payments.nothing").await, None);
}

#[tokio::test]
async fn a_refused_spec_puts_the_apis_error_in_the_ready_condition() {
    let h = harness().await;
    let now = Utc::now();
    let mut monitor = resource(
        Kind::Monitor,
        "bad",
        json!({"name": "Bad", "type": "http", "target": "https://example.com", "interval_secs": 0}),
    );
    let next = h.visit(&mut monitor, now).await;
    assert_eq!(next, Some(h.operator.timing.retry_refused));
    let (status, reason, message) = ready(&monitor);
    assert_eq!((status.as_str(), reason.as_str()), ("False", "Refused"));
    assert!(message.starts_with("HTTP 4"), "{message}");
    assert!(
        message.contains("interval_secs"),
        "names the field: {message}"
    );
    assert_eq!(monitor.status.id, None);
    assert!(h
        .cluster()
        .events(&monitor)
        .iter()
        .any(|e| e.warning && e.reason == "Refused"));

    // Fixed: applied.
    monitor.body.insert("interval_secs".into(), json!(300));
    monitor.generation = Some(2);
    h.visit(&mut monitor, now).await;
    assert_eq!(ready(&monitor).0, "True", "{:?}", monitor.status);
}

#[tokio::test]
async fn a_missing_secret_is_reported_without_calling_the_api() {
    let h = harness().await;
    let now = Utc::now();
    let mut contact = pager_contact();
    h.visit(&mut contact, now).await;
    let (status, reason, message) = ready(&contact);
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "SecretNotFound")
    );
    assert!(
        message.contains("pagerduty") && message.contains("routing-key"),
        "{message}"
    );
    let (_, list) = h.get("/api/v1/alert-contacts").await;
    assert!(
        !list.to_string().contains("payments.pager"),
        "nothing created: {list}"
    );

    // The Secret appears: the next visit applies.
    h.cluster()
        .put_secret("payments", "pagerduty", "routing-key", ROUTING_KEY);
    h.visit(&mut contact, now).await;
    assert_eq!(ready(&contact).0, "True", "{:?}", contact.status);
    let (code, shown) = h
        .get(&format!(
            "/api/v1/alert-contacts/{}",
            contact.status.id.unwrap()
        ))
        .await;
    assert_eq!(code, 200);
    assert!(
        !shown.to_string().contains(ROUTING_KEY),
        "the secret is never shown"
    );
}

#[tokio::test]
async fn the_status_follows_the_monitors_incident() {
    let h = harness().await;
    let now = Utc::now();
    let mut monitor = resource(
        Kind::Monitor,
        "db",
        json!({"name": "DB", "type": "tcp", "target": "example.com:5432"}),
    );
    h.visit(&mut monitor, now).await;
    let id = monitor.status.id.expect("created");
    assert_eq!(monitor.status.open_incident_id, None);
    let (_, shown) = h.get(&format!("/api/v1/monitors/{id}")).await;

    // The recorder opens an incident: the next visit (a read, no apply)
    // shows it.
    let incident = uuid::Uuid::new_v4();
    let started_at = Utc::now();
    let mut conn = uptime_db::pool::conn(&h.pool).await.unwrap();
    uptime_db::incidents::open(
        &mut conn,
        &[uptime_db::incidents::NewIncident {
            id: incident,
            org_id: shown["org_id"].as_i64().unwrap(),
            monitor_id: id,
            started_at,
            resolved_at: None,
            cause: Some("connection refused".into()),
            alerts: Vec::new(),
        }],
    )
    .await
    .unwrap();
    h.visit(&mut monitor, now + chrono::Duration::seconds(60))
        .await;
    assert_eq!(monitor.status.open_incident_id, Some(incident.to_string()));

    // Resolved: the id leaves the status.
    uptime_db::incidents::resolve(
        &mut conn,
        &[uptime_db::incidents::IncidentEnd {
            id: incident,
            monitor_id: id,
            resolved_at: Utc::now(),
            alerts: Vec::new(),
        }],
    )
    .await
    .unwrap();
    h.visit(&mut monitor, now + chrono::Duration::seconds(120))
        .await;
    assert_eq!(monitor.status.open_incident_id, None);
    assert_eq!(ready(&monitor).0, "True");
}
