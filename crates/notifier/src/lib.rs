//! The notifier: turns monitor events into alert deliveries and delivers
//! them reliably.
//!
//! - [`intake`]: the durable NATS consumer of state changes (current and
//!   previous version) and certificate warnings, taken in batches; each event becomes one
//!   `alert_deliveries` row per verified contact of its monitor (one
//!   statement per batch) before the event is acked.
//! - [`worker`]: claims due deliveries with a lease, sends them through
//!   `uptime-alerts` (email, Slack, signed webhooks), logs every attempt and
//!   retries with exponential backoff until delivered or given up.
//! - [`backoff`]: the retry policy, free of I/O.
//! - [`escalation`]: moves unacknowledged incidents of monitors with an
//!   escalation policy to their next step (a time-driven sweep; the planner
//!   is pure).
//!
//! Verification emails (written by the api-gateway) travel the same way, as
//! deliveries of kind `verification`.
//!
//! - [`page_mail`]: mails to status page subscribers (confirmations and
//!   notices) from their own outbox, `status_page_mails`, with the same
//!   leases, backoff and dead letters.
//! - [`lease`]: who holds a delivery while it is sent; [`settings`]: the
//!   notifier's configuration.

pub mod backoff;
pub mod escalation;
pub mod intake;
pub mod lease;
pub mod page_mail;
pub mod settings;
pub mod worker;

use async_nats::jetstream;
use settings::NotifierSettings;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use uptime_consumer::Bus;
use uptime_contracts::{streams, subjects};

/// JetStream redelivers an event until it is acked: an event given up on
/// would be alerts lost (undecodable events are dead-lettered instead).
const UNLIMITED_DELIVERIES: i64 = -1;

#[derive(Debug, thiserror::Error)]
pub enum NotifierError {
    #[error(transparent)]
    Db(#[from] uptime_db::DbError),
    #[error(transparent)]
    Bus(#[from] uptime_consumer::BusError),
    #[error("setting up the alert channels: {0}")]
    Channels(#[from] uptime_alerts::SetupError),
    #[error("ops server: {0}")]
    Ops(#[from] std::io::Error),
    #[error(transparent)]
    AckLinks(#[from] uptime_alerts::ack_link::InvalidAckSecret),
    #[error("secrets keys: {0}")]
    Secrets(#[from] uptime_secrets::SecretError),
}

/// A notifier connected to its database and broker, with its ops server bound.
pub struct Notifier {
    settings: NotifierSettings,
    pool: uptime_db::Pool,
    bus: Bus,
    consumer: uptime_consumer::Consumer,
    sender: uptime_alerts::Sender,
    ack_links: Option<uptime_alerts::AckLinks>,
    keyring: Option<Arc<uptime_secrets::Keyring>>,
    shell: uptime_ops::Shell,
}

impl Notifier {
    /// Connects, creates the streams and the durable consumer (idempotent),
    /// and binds the ops listener (port 0 picks a free one).
    pub async fn build(settings: NotifierSettings) -> Result<Self, NotifierError> {
        let tuning = &settings.notifier;
        if tuning.lease() <= tuning.http_timeout() {
            tracing::warn!(lease_secs = tuning.lease_secs, http_timeout_secs = tuning.http_timeout_secs,
                "the delivery lease is not longer than an attempt may take; slow attempts may be repeated");
        }
        let ack_links = uptime_alerts::AckLinks::from_settings(&settings.ack_links)?;
        let sender = uptime_alerts::Sender::with_providers(
            &settings.smtp,
            &settings.safety,
            tuning.http_timeout(),
            &settings.alert_providers,
        )?;
        // A wrong key configuration refuses to start; none at all only fails
        // the deliveries to contacts whose credential is sealed.
        let keyring = uptime_secrets::Keyring::from_settings(&settings.secrets)?.map(Arc::new);
        let pool = uptime_db::connect(&settings.database)?;
        let postgres = uptime_db::pool::readiness_check(&pool);
        // The intake's consumer loop, the delivery worker's, the escalation
        // sweep's and the page mailer's: `/readyz` says when one stops.
        let (bus, shell) = Bus::open_service::<NotifierError>(
            "notifier",
            &settings.nats,
            &settings.ops,
            uptime_ops::Readiness::new().with_check("postgres", postgres),
        )
        .await?;
        let config = jetstream::consumer::pull::Config {
            // The current and the previous version of each family
            // (uptime_contracts::versions). Recorders publish one
            // version per event: state-changed.v4 (with the incident,
            // and the round of a monitor checked from several regions)
            // and ssl-expiring.v2. v3 stays read while recorders of the
            // release before may still run; an event in both versions
            // makes one delivery per contact (unique per event and
            // contact). Version 2 was retired with v4's arrival: nobody
            // had published it since 2026-11-25.
            filter_subjects: vec![
                subjects::STATE_CHANGED_V4.to_string(),
                subjects::STATE_CHANGED_V3.to_string(),
                subjects::SSL_EXPIRING_V2.to_string(),
            ],
            ..streams::durable_pull(
                streams::NOTIFIER_CONSUMER,
                tuning.ack_wait(),
                UNLIMITED_DELIVERIES,
            )
        };
        // The intake also reports the consumer's lag.
        let consumer = bus
            .durable(
                streams::EVENTS_STREAM,
                config,
                streams::NOTIFIER_CONSUMER,
                shell.watchdog(),
            )
            .await?;
        Ok(Self {
            settings,
            pool,
            bus,
            consumer,
            sender,
            ack_links,
            keyring,
            shell,
        })
    }

    /// Where `/healthz`, `/readyz` and `/metrics` are served.
    pub fn ops_addr(&self) -> SocketAddr {
        self.shell.addr()
    }

    /// Runs until `shutdown` is cancelled: the batch of events in progress
    /// is stored and the attempts in flight are finished first.
    pub async fn run_until(self, shutdown: CancellationToken) -> Result<(), NotifierError> {
        let (settings, pool, mut shell) = (self.settings, self.pool, self.shell);
        let tuning = &settings.notifier;
        let deliveries_added = Arc::new(Notify::new());
        let policy = backoff::RetryPolicy {
            initial: tuning.initial_backoff(),
            max: tuning.max_backoff(),
            give_up_after: tuning.give_up_after(),
        };
        let page_mailer = Arc::new(page_mail::PageMailer {
            pool: pool.clone(),
            sender: self.sender.clone(),
            policy,
            concurrency: tuning.concurrency,
            lease: tuning.lease(),
            holder: tuning.instance_id.clone(),
            poll_interval: tuning.poll_interval(),
        });
        let worker = Arc::new(worker::Worker {
            pool: pool.clone(),
            sender: self.sender,
            ack_links: self.ack_links,
            keyring: self.keyring,
            policy,
            concurrency: tuning.concurrency,
            lease: tuning.lease(),
            holder: tuning.instance_id.clone(),
            poll_interval: tuning.poll_interval(),
            deliveries_added: deliveries_added.clone(),
        });
        let sweep = escalation::Sweep {
            pool: pool.clone(),
            interval: std::time::Duration::from_millis(
                settings.escalation.sweep_interval_ms.max(10),
            ),
            batch: settings.escalation.sweep_batch.max(1),
            deliveries_added: deliveries_added.clone(),
        };
        let intake = intake::Intake {
            pool: pool.clone(),
            deliveries_added,
            retry_delay: tuning.retry_delay(),
        };
        tracing::info!(ops = %shell.addr(), "notifier started");
        let worker_rounds = shell.watch("notifier delivery worker", tuning.poll_interval());
        shell.spawn(
            "delivery worker",
            worker.run(shutdown.clone(), worker_rounds),
        );
        let sweep_rounds = shell.watch("notifier escalation sweep", sweep.interval);
        let sweeping = shutdown.clone();
        shell.spawn("escalation sweep", async move {
            sweep.run(sweeping, sweep_rounds).await
        });
        let mailer_rounds = shell.watch("notifier page mailer", tuning.poll_interval());
        shell.spawn(
            "page mailer",
            page_mailer.run(shutdown.clone(), mailer_rounds),
        );
        let batching = uptime_consumer::Batching {
            max_messages: tuning.batch_size,
            max_wait: tuning.batch_wait(),
        };
        self.bus
            .run_batches(
                shell,
                self.consumer,
                batching,
                |batch| intake.handle(batch),
                shutdown,
            )
            .await
    }
}

/// Builds and runs a notifier until `shutdown`.
pub async fn run(
    settings: NotifierSettings,
    shutdown: CancellationToken,
) -> Result<(), NotifierError> {
    Notifier::build(settings).await?.run_until(shutdown).await
}
