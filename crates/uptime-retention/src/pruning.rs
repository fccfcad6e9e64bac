//! Everything that grows and is not `check_results` (whose partitions are
//! dropped whole, see [`crate::partitions`]) is pruned here, in small batches:
//!
//! | step | removes | after |
//! | --- | --- | --- |
//! | deliveries | delivered and failed `alert_deliveries` with their `alert_delivery_attempts` (never pending ones) | `deliveries_days` from creation |
//! | outbox | published `outbox_events` (never unpublished ones) | `outbox_hours` from publication |
//! | verification tokens | clears `alert_contacts.verification_token_sha256` (the contact stays) | `verification_token_hours` from issue |
//! | rollups | `daily_uptime` rows | `rollups_days` |
//! | revoked API keys | `api_keys` rows revoked | `revoked_api_keys_days` from revocation |
//! | rounds | decided `check_rounds`; undecided ones (a round nobody decided) | `results_days` from decision; `open_rounds_hours` from creation |
//! | audit log | `audit_log` entries | `audit_log_days` from recording |
//! | invitations | accepted, revoked and expired `invitations` | `invitations_days` from their end |
//! | incidents | resolved `incidents` (never open ones) | `incidents_days` from resolution |
//! | idempotency keys | `idempotency_keys` (kept responses and stale claims) | `idempotency_hours` from the claim |
//! | maintenance spans | closed `maintenance_spans` (never open ones) | `maintenance_spans_days` from closing |
//! | maintenance windows | `maintenance_windows` that can never open again | `maintenance_windows_days` from their last end |
//! | pending subscriptions | `status_page_subscribers` never confirmed (with their mails) | `pending_subscription_hours` from the request |
//! | subscriber mails | sent and failed `status_page_mails` (never pending ones) | `status_page_mails_days` from writing |
//!
//! Each batch is one short statement of at most `batch_size` rows (SQL in
//! `uptime_db::retention`); a step loops until a batch comes back short,
//! yielding between batches and stopping early when `stop` is cancelled.
//! Every step reports how many rows it removed.

use crate::settings::{cutoff, days, first_day_kept, hours};
use crate::{RetentionError, RetentionSettings};
use chrono::{DateTime, NaiveDate, Utc};
use diesel_async::AsyncPgConnection;
use tokio_util::sync::CancellationToken;
use uptime_db::retention as sql;
use uptime_db::DbResult;

/// Rows removed by one pruning pass, per table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PruneReport {
    pub alert_deliveries: u64,
    pub alert_delivery_attempts: u64,
    pub outbox_events: u64,
    /// Tokens cleared (their contacts stay).
    pub verification_tokens: u64,
    pub daily_uptime: u64,
    pub api_keys: u64,
    pub check_rounds: u64,
    pub audit_log: u64,
    pub invitations: u64,
    pub incidents: u64,
    pub idempotency_keys: u64,
    pub maintenance_spans: u64,
    pub maintenance_windows: u64,
    pub status_page_subscribers: u64,
    pub status_page_mails: u64,
}

impl PruneReport {
    /// `(label, rows)` for `retention_rows_removed_total{table}`.
    pub fn by_table(&self) -> [(&'static str, u64); 15] {
        [
            ("alert_deliveries", self.alert_deliveries),
            ("alert_delivery_attempts", self.alert_delivery_attempts),
            ("outbox_events", self.outbox_events),
            ("verification_tokens", self.verification_tokens),
            ("daily_uptime", self.daily_uptime),
            ("api_keys", self.api_keys),
            ("check_rounds", self.check_rounds),
            ("audit_log", self.audit_log),
            ("invitations", self.invitations),
            ("incidents", self.incidents),
            ("idempotency_keys", self.idempotency_keys),
            ("maintenance_spans", self.maintenance_spans),
            ("maintenance_windows", self.maintenance_windows),
            ("status_page_subscribers", self.status_page_subscribers),
            ("status_page_mails", self.status_page_mails),
        ]
    }

    pub fn total(&self) -> u64 {
        self.by_table().iter().map(|(_, n)| n).sum()
    }
}

/// A step that failed; the others still ran.
#[derive(Debug)]
pub struct StepFailure {
    pub step: &'static str,
    pub error: RetentionError,
}

/// What [`prune`] did.
#[derive(Debug, Default)]
pub struct PruneOutcome {
    pub report: PruneReport,
    pub failures: Vec<StepFailure>,
    /// `stop` was cancelled before every step had finished.
    pub interrupted: bool,
}

/// Runs every pruning step once for the clock reading `now`. A failing step
/// is reported and the next one still runs (one stuck table must not keep
/// the others growing).
pub async fn prune(
    conn: &mut AsyncPgConnection,
    settings: &RetentionSettings,
    now: DateTime<Utc>,
    stop: &CancellationToken,
) -> PruneOutcome {
    let limit = settings.batch_limit();
    let steps = [
        cutoff(now, days(settings.deliveries_days)).map(Step::Deliveries),
        cutoff(now, hours(settings.outbox_hours)).map(Step::Outbox),
        cutoff(now, hours(settings.verification_token_hours)).map(Step::VerificationTokens),
        first_day_kept(now, settings.rollups_days).map(Step::Rollups),
        cutoff(now, days(settings.revoked_api_keys_days)).map(Step::RevokedApiKeys),
        // Decided rounds live as long as their results; an undecided one
        // past `open_rounds_hours` was never going to be decided (its
        // monitor's regions changed, a sweeper long gone).
        cutoff(now, days(settings.results_days))
            .map(|decided| Step::Rounds(decided, cutoff(now, hours(settings.open_rounds_hours)))),
        cutoff(now, days(settings.audit_log_days)).map(Step::AuditLog),
        cutoff(now, days(settings.invitations_days)).map(Step::Invitations),
        cutoff(now, days(settings.incidents_days)).map(Step::Incidents),
        cutoff(now, hours(settings.idempotency_hours)).map(Step::IdempotencyKeys),
        cutoff(now, days(settings.maintenance_spans_days)).map(Step::MaintenanceSpans),
        cutoff(now, days(settings.maintenance_windows_days)).map(Step::MaintenanceWindows),
        cutoff(now, hours(settings.pending_subscription_hours)).map(Step::PendingSubscriptions),
        cutoff(now, days(settings.status_page_mails_days)).map(Step::SubscriberMails),
    ];
    let mut out = PruneOutcome::default();
    // Zero settings leave their step out: never pruned.
    for step in steps.into_iter().flatten() {
        let mut removed = Removed::default();
        let result = batches(conn, step, limit, stop, &mut removed).await;
        let report = &mut out.report;
        match step {
            Step::Deliveries(_) => {
                report.alert_deliveries = removed.rows;
                report.alert_delivery_attempts = removed.attempts;
            }
            Step::Outbox(_) => report.outbox_events = removed.rows,
            Step::VerificationTokens(_) => report.verification_tokens = removed.rows,
            Step::Rollups(_) => report.daily_uptime = removed.rows,
            Step::RevokedApiKeys(_) => report.api_keys = removed.rows,
            Step::Rounds(..) => report.check_rounds = removed.rows,
            Step::AuditLog(_) => report.audit_log = removed.rows,
            Step::Invitations(_) => report.invitations = removed.rows,
            Step::Incidents(_) => report.incidents = removed.rows,
            Step::IdempotencyKeys(_) => report.idempotency_keys = removed.rows,
            Step::MaintenanceSpans(_) => report.maintenance_spans = removed.rows,
            Step::MaintenanceWindows(_) => report.maintenance_windows = removed.rows,
            Step::PendingSubscriptions(_) => report.status_page_subscribers = removed.rows,
            Step::SubscriberMails(_) => report.status_page_mails = removed.rows,
        }
        match result {
            Ok(true) => {}
            Ok(false) => {
                out.interrupted = true;
                break;
            }
            Err(error) => {
                let error = RetentionError::from(error);
                tracing::warn!(step = step.name(), %error, "retention step failed");
                out.failures.push(StepFailure {
                    step: step.name(),
                    error,
                });
            }
        }
    }
    out
}

/// What a step removed so far: rows of its table, and the delivery attempts
/// that went with them (deliveries only).
#[derive(Debug, Default)]
struct Removed {
    rows: u64,
    attempts: u64,
}

/// One pruning step and its cutoff.
#[derive(Debug, Clone, Copy)]
enum Step {
    Deliveries(DateTime<Utc>),
    Outbox(DateTime<Utc>),
    VerificationTokens(DateTime<Utc>),
    Rollups(NaiveDate),
    RevokedApiKeys(DateTime<Utc>),
    /// (decided before, undecided and created before; `None`: kept).
    Rounds(DateTime<Utc>, Option<DateTime<Utc>>),
    AuditLog(DateTime<Utc>),
    Invitations(DateTime<Utc>),
    /// Resolved before.
    Incidents(DateTime<Utc>),
    /// Claimed before.
    IdempotencyKeys(DateTime<Utc>),
    /// Closed before.
    MaintenanceSpans(DateTime<Utc>),
    MaintenanceWindows(DateTime<Utc>),
    /// Requested (and never confirmed) before.
    PendingSubscriptions(DateTime<Utc>),
    /// Written (and settled) before.
    SubscriberMails(DateTime<Utc>),
}

impl Step {
    fn name(self) -> &'static str {
        match self {
            Step::Deliveries(_) => "deliveries",
            Step::Outbox(_) => "outbox",
            Step::VerificationTokens(_) => "verification_tokens",
            Step::Rollups(_) => "rollups",
            Step::RevokedApiKeys(_) => "revoked_api_keys",
            Step::Rounds(..) => "rounds",
            Step::AuditLog(_) => "audit_log",
            Step::Invitations(_) => "invitations",
            Step::Incidents(_) => "incidents",
            Step::IdempotencyKeys(_) => "idempotency_keys",
            Step::MaintenanceSpans(_) => "maintenance_spans",
            Step::MaintenanceWindows(_) => "maintenance_windows",
            Step::PendingSubscriptions(_) => "pending_subscriptions",
            Step::SubscriberMails(_) => "subscriber_mails",
        }
    }

    /// One batch: (rows of the step's table, attempts removed with them).
    async fn batch(self, conn: &mut AsyncPgConnection, limit: i64) -> DbResult<(u64, u64)> {
        Ok(match self {
            Step::Deliveries(before) => {
                let n = sql::delete_settled_deliveries(conn, before, limit).await?;
                (n.deliveries, n.attempts)
            }
            Step::Outbox(before) => (sql::delete_published_outbox(conn, before, limit).await?, 0),
            Step::VerificationTokens(before) => (
                sql::clear_expired_verification_tokens(conn, before, limit).await?,
                0,
            ),
            Step::Rollups(first_kept) => {
                (sql::delete_daily_uptime(conn, first_kept, limit).await?, 0)
            }
            Step::RevokedApiKeys(before) => {
                (sql::delete_revoked_api_keys(conn, before, limit).await?, 0)
            }
            Step::Rounds(decided, open) => (
                uptime_db::rounds::delete_old_rounds(conn, decided, open, limit).await?,
                0,
            ),
            Step::AuditLog(before) => (
                uptime_db::audit_log::delete_older_than(conn, before, limit).await?,
                0,
            ),
            Step::Invitations(before) => (
                uptime_db::invitations::delete_ended_before(conn, before, limit).await?,
                0,
            ),
            Step::Incidents(before) => (
                uptime_db::incidents::delete_resolved_before(conn, before, limit).await?,
                0,
            ),
            Step::IdempotencyKeys(before) => (
                uptime_db::idempotency::delete_created_before(conn, before, limit).await?,
                0,
            ),
            Step::MaintenanceSpans(before) => (
                uptime_db::maintenance::delete_spans_closed_before(conn, before, limit).await?,
                0,
            ),
            Step::MaintenanceWindows(before) => (
                uptime_db::maintenance::delete_windows_ended_before(conn, before, limit).await?,
                0,
            ),
            Step::PendingSubscriptions(before) => (
                uptime_db::status_subscriptions::delete_pending_before(conn, before, limit).await?,
                0,
            ),
            Step::SubscriberMails(before) => (
                uptime_db::status_page_mails::delete_settled_before(conn, before, limit).await?,
                0,
            ),
        })
    }
}

/// Runs `step` batch after batch until one removes fewer than `limit` rows,
/// adding up into `removed`. `Ok(false)` when `stop` ended it first.
/// Between batches the task yields, so a long backlog (the first round after
/// an upgrade) never starves the recorder's own work.
async fn batches(
    conn: &mut AsyncPgConnection,
    step: Step,
    limit: i64,
    stop: &CancellationToken,
    removed: &mut Removed,
) -> DbResult<bool> {
    loop {
        if stop.is_cancelled() {
            return Ok(false);
        }
        let (rows, attempts) = step.batch(conn, limit).await?;
        removed.rows += rows;
        removed.attempts += attempts;
        if rows < limit as u64 {
            return Ok(true);
        }
        tokio::task::yield_now().await;
    }
}
