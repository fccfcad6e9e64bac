//! Shared by the notifier's tests: a real notifier in-process against its own
//! PostgreSQL database and NATS server, seeding with diesel, publishing
//! events, and an independent Standard Webhooks signature check.
#![allow(dead_code)]

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use hmac::{Hmac, Mac};
use notifier::settings::NotifierSettings;
use sha2::Sha256;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use uptime_config::SmtpTls;
use uptime_contracts::*;
use uptime_contracts::{MonitorRef, StateChangedV3};
use uptime_db::deliveries::{AlertDelivery, DeliveryAttempt};
use uptime_db::models::{AlertContact, Monitor, MonitorDefinition, NewAlertContact};
use uptime_db::schema::monitor_alert_contacts;
use uptime_testkit::fixtures::{insert_monitor, monitor_definition};
use uptime_testkit::smtp::SmtpServer;
use uptime_testkit::TestEnv;
use uuid::Uuid;

pub const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

pub struct World {
    pub env: TestEnv,
    pub smtp: SmtpServer,
    pub js: async_nats::jetstream::Context,
    _nats: async_nats::Client,
}

impl World {
    pub async fn start() -> Self {
        let env = TestEnv::start().await;
        let smtp = SmtpServer::start().await;
        let (client, js) = env.nats.jetstream().await;
        Self {
            env,
            smtp,
            js,
            _nats: client,
        }
    }

    /// Settings for a notifier of this world: private targets allowed (the
    /// receivers are on loopback), quick retries.
    pub fn settings(&self) -> NotifierSettings {
        let mut s = NotifierSettings {
            database: self.env.db.settings(),
            nats: self.env.nats.settings(),
            ..Default::default()
        };
        s.ops.listen = "127.0.0.1:0".into();
        s.safety.allow_private_targets = true;
        s.smtp = uptime_config::SmtpSettings {
            host: self.smtp.host().into(),
            port: self.smtp.port(),
            tls: SmtpTls::None,
            from: "Uptime <alerts@uptime.test>".into(),
            ..Default::default()
        };
        s.notifier.initial_backoff_secs = 0.1;
        s.notifier.max_backoff_secs = 0.5;
        s.notifier.poll_interval_ms = 50;
        s.notifier.lease_secs = 30.0;
        s.notifier.http_timeout_secs = 5.0;
        s.notifier.retry_delay_ms = 100;
        s
    }

    pub async fn conn(&self) -> uptime_db::PooledConn {
        uptime_db::pool::conn(&self.env.db.pool)
            .await
            .expect("db connection")
    }

    pub async fn user(&self, name: &str) -> i64 {
        uptime_db::users::create(&mut *self.conn().await, name)
            .await
            .expect("insert user")
            .id
    }

    pub async fn monitor(&self, user_id: i64, name: &str, active: bool) -> Monitor {
        let definition = MonitorDefinition {
            name: name.into(),
            target: Some("https://shop.example.com/health".into()),
            active,
            ..monitor_definition(uptime_contracts::MonitorKind::Http)
        };
        insert_monitor(&mut *self.conn().await, user_id, definition).await
    }

    /// A contact attached to `monitor_id`.
    pub async fn contact(
        &self,
        user_id: i64,
        monitor_id: i64,
        kind: &str,
        value: &str,
        verified: bool,
    ) -> AlertContact {
        let mut conn = self.conn().await;
        let contact = uptime_db::contacts::create(
            &mut conn,
            &NewAlertContact {
                org_id: user_id,
                kind: kind.into(),
                name: format!("{kind} contact"),
                value: value.into(),
                verified,
                verification_token_sha256: None,
                signing_secret: (kind == "webhook").then(|| SECRET.to_string()),
                secret_sealed: None,
                options: serde_json::json!({}),
                event_kinds: None,
                min_severity: 0,
            },
        )
        .await
        .expect("insert contact");
        diesel::insert_into(monitor_alert_contacts::table)
            .values((
                monitor_alert_contacts::monitor_id.eq(monitor_id),
                monitor_alert_contacts::contact_id.eq(contact.id),
            ))
            .execute(&mut conn)
            .await
            .expect("attach contact");
        contact
    }

    /// Publishes a state change as the recorder would.
    pub async fn publish_change(&self, event: &StateChangedV3) {
        self.publish_with_id(&event.event_id.to_string(), event)
            .await;
    }

    /// Publishes with an explicit `Nats-Msg-Id` (a different one makes
    /// JetStream store a duplicate of the same event, as a republished outbox
    /// row would after the dedup window).
    pub async fn publish_with_id<M: uptime_contracts::Message>(&self, msg_id: &str, msg: &M) {
        let mut headers = async_nats::HeaderMap::new();
        headers.insert(async_nats::header::NATS_MESSAGE_ID, msg_id);
        uptime_contracts::bus::publish_acked(&self.js, headers, msg)
            .await
            .expect("publish event");
    }

    pub async fn deliveries_of(
        &self,
        event_id: Uuid,
    ) -> Vec<(AlertDelivery, Vec<DeliveryAttempt>)> {
        uptime_db::deliveries::list_for_event(&mut *self.conn().await, event_id)
            .await
            .expect("list deliveries")
    }

    /// Waits until every delivery of `event_id` is settled (delivered or
    /// failed) and there are `count` of them.
    pub async fn settled(
        &self,
        event_id: Uuid,
        count: usize,
        deadline: Duration,
    ) -> Vec<(AlertDelivery, Vec<DeliveryAttempt>)> {
        let until = tokio::time::Instant::now() + deadline;
        loop {
            let rows = self.deliveries_of(event_id).await;
            if rows.len() == count && rows.iter().all(|(d, _)| d.status != "pending") {
                return rows;
            }
            if tokio::time::Instant::now() > until {
                panic!("deliveries of {event_id} not settled within {deadline:?}: {rows:#?}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// A notifier running in this process until dropped or `kill`ed.
pub struct Running {
    shutdown: CancellationToken,
    task: Option<tokio::task::JoinHandle<Result<(), notifier::NotifierError>>>,
}

impl Running {
    pub async fn start(settings: NotifierSettings) -> Self {
        let notifier = notifier::Notifier::build(settings)
            .await
            .expect("build notifier");
        let shutdown = CancellationToken::new();
        let task = tokio::spawn(notifier.run_until(shutdown.clone()));
        Self {
            shutdown,
            task: Some(task),
        }
    }

    /// Stops it abruptly, as a crash would: nothing in flight is finished.
    pub async fn kill(mut self) {
        let task = self.task.take().expect("running");
        task.abort();
        let _ = task.await;
    }

    /// Stops it gracefully.
    pub async fn stop(mut self) {
        self.shutdown.cancel();
        let task = self.task.take().expect("running");
        task.await.expect("notifier task").expect("notifier result");
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

pub fn monitor_ref(m: &Monitor) -> MonitorRef {
    MonitorRef {
        id: m.id,
        user_id: m.org_id,
        name: m.name.clone(),
        kind: MonitorKind::Http,
        target: m.target.clone(),
    }
}

/// A state change of `m` from `previous` (entered at `previous_since`) to `status` at `at`.
pub fn change(
    m: &Monitor,
    previous: MonitorStatus,
    status: MonitorStatus,
    previous_since: DateTime<Utc>,
    at: DateTime<Utc>,
) -> StateChangedV3 {
    let failed = status == MonitorStatus::Down;
    StateChangedV3 {
        event_id: Uuid::new_v4(),
        monitor: monitor_ref(m),
        previous_status: previous,
        status,
        occurred_at: at,
        previous_since: Some(previous_since),
        consecutive_failures: u32::from(failed),
        check: CheckRef {
            check_id: Uuid::new_v4(),
            trigger: Trigger::Scheduled,
            checked_at: at,
            status,
            latency_ms: Some(if failed { 1234 } else { 87 }),
            http_status: Some(if failed { 503 } else { 200 }),
            error: failed.then(|| "expected status 200, got 503".to_string()),
        },
        round: None,
    }
}

/// Verifies a Standard Webhooks signature from first principles (HMAC-SHA256
/// over `id.timestamp.body` keyed with the base64-decoded secret), not with
/// the code under test.
pub fn signature_is_valid(
    secret: &str,
    id: &str,
    timestamp: &str,
    body: &[u8],
    header: &str,
) -> bool {
    let key = STANDARD
        .decode(secret.strip_prefix("whsec_").expect("whsec_ prefix"))
        .expect("base64 secret");
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).expect("hmac key");
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(body);
    let expected = STANDARD.encode(mac.finalize().into_bytes());
    // The header may carry several space-separated signatures.
    header
        .split(' ')
        .any(|sig| sig.strip_prefix("v1,") == Some(expected.as_str()))
}

/// Asserts a received webhook request is signed correctly, with a recent timestamp.
pub fn assert_signed(req: &uptime_testkit::receiver::ReceivedRequest) {
    let id = req.header("webhook-id").expect("webhook-id header");
    let ts = req
        .header("webhook-timestamp")
        .expect("webhook-timestamp header");
    let sig = req
        .header("webhook-signature")
        .expect("webhook-signature header");
    let ts_secs: i64 = ts.parse().expect("timestamp is unix seconds");
    assert!(
        (Utc::now().timestamp() - ts_secs).abs() < 300,
        "timestamp {ts} is not recent"
    );
    assert!(
        signature_is_valid(SECRET, id, ts, &req.body, sig),
        "bad signature {sig} for id {id}"
    );
}
