//! The reconcile decisions, free of I/O: what to do with a custom resource
//! ([`next_step`]), the body to send ([`apply_body`]), and the status and
//! the next visit once the API has answered ([`status_after`],
//! [`requeue_after`]). The clock is a parameter; the shell
//! ([`crate::reconcile`]) does the talking.

use crate::resources::{AlertContact, Condition, Monitor, ResourceStatus};
use chrono::{DateTime, Utc};
use kube::ResourceExt;
use serde_json::{Map, Value};
use std::time::Duration;

/// Held by every resource the operator has (or may have) created in the
/// API: the custom resource goes away only after the API resource did.
pub const FINALIZER: &str = "uptime.dev/api-resource";

/// The longest ref the API accepts.
pub const MAX_REF_LEN: usize = 255;

/// The longest condition message written (the API's error can list many
/// fields; the object lives in etcd).
pub const MAX_MESSAGE_LEN: usize = 1024;

/// The condition type the operator owns.
pub const READY: &str = "Ready";

/// Which API collection a custom resource stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Monitor,
    AlertContact,
}

impl Kind {
    /// The collection's segment in `/api/v1/{segment}`.
    pub fn api_segment(self) -> &'static str {
        match self {
            Kind::Monitor => "monitors",
            Kind::AlertContact => "alert-contacts",
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Monitor => "Monitor",
            Kind::AlertContact => "AlertContact",
        }
    }
}

/// A custom resource of either kind, as the decisions see it.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceView {
    pub kind: Kind,
    pub namespace: String,
    pub name: String,
    /// `metadata.uid` (events name it).
    pub uid: Option<String>,
    pub generation: Option<i64>,
    /// `metadata.deletionTimestamp` is set.
    pub deleting: bool,
    pub has_finalizer: bool,
    /// The spec's REST body fields (without `secret_fields`).
    pub body: Map<String, Value>,
    pub secret_fields: Vec<crate::resources::SecretField>,
    pub status: ResourceStatus,
}

impl ResourceView {
    fn of<K: ResourceExt>(
        kind: Kind,
        resource: &K,
        body: &Map<String, Value>,
        secret_fields: &[crate::resources::SecretField],
        status: Option<&ResourceStatus>,
    ) -> Self {
        Self {
            kind,
            namespace: resource.namespace().unwrap_or_default(),
            name: resource.name_any(),
            uid: resource.uid(),
            generation: resource.meta().generation,
            deleting: resource.meta().deletion_timestamp.is_some(),
            has_finalizer: resource.finalizers().iter().any(|f| f == FINALIZER),
            body: body.clone(),
            secret_fields: secret_fields.to_vec(),
            status: status.cloned().unwrap_or_default(),
        }
    }
}

impl From<&Monitor> for ResourceView {
    fn from(m: &Monitor) -> Self {
        Self::of(
            Kind::Monitor,
            m,
            &m.spec.body,
            &m.spec.secret_fields,
            m.status.as_ref(),
        )
    }
}

impl From<&AlertContact> for ResourceView {
    fn from(c: &AlertContact) -> Self {
        Self::of(
            Kind::AlertContact,
            c,
            &c.spec.body,
            &c.spec.secret_fields,
            c.status.as_ref(),
        )
    }
}

/// Why a spec cannot be sent at all (the API is not asked).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SpecProblem {
    /// The condition's reason (CamelCase).
    pub reason: &'static str,
    pub message: String,
}

impl SpecProblem {
    pub(crate) fn new(reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            reason,
            message: message.into(),
        }
    }
}

/// The API ref of a custom resource: `<prefix><namespace>.<name>`, checked
/// against the API's ref syntax (1-255 of `[a-z0-9._-]`, alphanumeric at
/// both ends). Kubernetes names always fit the characters; a long name in
/// a long namespace may not fit the length.
pub fn api_ref(prefix: &str, namespace: &str, name: &str) -> Result<String, SpecProblem> {
    let candidate = format!("{prefix}{namespace}.{name}");
    let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c);
    let ends_ok = |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    if candidate.len() > MAX_REF_LEN
        || !candidate.chars().all(allowed)
        || !ends_ok(candidate.chars().next())
        || !ends_ok(candidate.chars().last())
    {
        return Err(SpecProblem::new(
            "InvalidName",
            format!(
                "the API ref {candidate:?} (prefix, namespace \".\" name) must be 1-{MAX_REF_LEN} characters of a-z 0-9 . _ -, alphanumeric at both ends"
            ),
        ));
    }
    Ok(candidate)
}

/// What to do next with a custom resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Put [`FINALIZER`] on first: before anything exists in the API, so a
    /// deletion can never leave an API resource behind.
    AddFinalizer,
    /// Send the spec (`PUT .../by-ref/{api_ref}`).
    Apply { api_ref: String },
    /// The spec was applied and is still current: only read the monitor's
    /// state for the status.
    Observe { id: i64 },
    /// Nothing to send or read until `wait` has passed.
    Idle { wait: Duration },
    /// Delete the API resource, then remove the finalizer.
    Delete {
        api_ref: String,
        known_id: Option<i64>,
    },
    /// Deleting a resource that never reached the API: remove the finalizer.
    Release,
    /// The spec cannot be sent; say so in the status.
    Refuse(SpecProblem),
    /// Deleted and already released: nothing left to do.
    Done,
}

/// How often the spec is sent again although nothing changed, and how often
/// a monitor's state is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    pub reapply_every: Duration,
    pub observe_every: Duration,
    pub retry_refused: Duration,
    pub retry_unreachable: Duration,
}

/// The next step for `view` at `now`.
pub fn next_step(
    view: &ResourceView,
    ref_prefix: &str,
    timing: &Timing,
    now: DateTime<Utc>,
) -> Step {
    let wanted_ref = api_ref(ref_prefix, &view.namespace, &view.name);
    if view.deleting {
        return match (view.has_finalizer, wanted_ref) {
            (false, _) => Step::Done,
            (true, Ok(api_ref)) => Step::Delete {
                api_ref,
                known_id: view.status.id,
            },
            // Its ref was never valid, so it was never created.
            (true, Err(_)) => Step::Release,
        };
    }
    if !view.has_finalizer {
        return Step::AddFinalizer;
    }
    let api_ref = match wanted_ref {
        Ok(r) => r,
        Err(problem) => return Step::Refuse(problem),
    };
    let status = &view.status;
    let ready = ready_condition(status).is_some_and(|c| c.status == "True");
    let current = ready
        && status.observed_generation == view.generation
        && status.api_ref.as_deref() == Some(api_ref.as_str());
    let applied_at = status.last_applied_at.filter(|_| current);
    match (applied_at, status.id) {
        (Some(at), Some(id)) => {
            let since = (now - at).to_std().unwrap_or_default();
            if since >= timing.reapply_every {
                Step::Apply { api_ref }
            } else if view.kind == Kind::Monitor {
                Step::Observe { id }
            } else {
                Step::Idle {
                    wait: timing.reapply_every - since,
                }
            }
        }
        _ => Step::Apply { api_ref },
    }
}

pub use crate::body::{apply_body, referenced, secret_keys};

/// What the API said about a monitor or contact.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Observed {
    pub id: i64,
    /// `pending`, `up`, `degraded`, `down`, or `paused` when inactive.
    pub state: Option<String>,
    pub last_checked_at: Option<DateTime<Utc>>,
    pub open_incident_id: Option<String>,
}

/// How a visit ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The API accepted the spec.
    Applied(Observed),
    /// The state was read; nothing was sent.
    Observed(Observed),
    /// The API refused the spec (a 4xx); `message` is its error.
    Refused { message: String },
    /// The API could not be asked (transport error, 5xx, 429).
    Unreachable { message: String },
    /// The spec could not be sent.
    Invalid(SpecProblem),
}

pub fn ready_condition(status: &ResourceStatus) -> Option<&Condition> {
    status.conditions.iter().find(|c| c.kind == READY)
}

/// The status after `outcome`: what the API said, the `Ready` condition
/// (its transition time kept while its status stays), the generation seen.
pub fn status_after(
    view: &ResourceView,
    ref_prefix: &str,
    outcome: &Outcome,
    now: DateTime<Utc>,
) -> ResourceStatus {
    let mut status = view.status.clone();
    let (ready, reason, message) = match outcome {
        Outcome::Applied(seen) => {
            observe_into(&mut status, seen);
            status.last_applied_at = Some(now);
            status.api_ref = api_ref(ref_prefix, &view.namespace, &view.name).ok();
            ("True", "Applied", "the spec is applied".to_string())
        }
        Outcome::Observed(seen) => {
            observe_into(&mut status, seen);
            return status;
        }
        Outcome::Refused { message } => ("False", "Refused", message.clone()),
        Outcome::Unreachable { message } => ("Unknown", "ApiUnreachable", message.clone()),
        Outcome::Invalid(problem) => ("False", problem.reason, problem.message.clone()),
    };
    status.observed_generation = view.generation;
    let message = truncate(&message, MAX_MESSAGE_LEN);
    let previous = ready_condition(&view.status);
    let last_transition_time = match previous {
        Some(c) if c.status == ready => c.last_transition_time,
        _ => now,
    };
    status.conditions.retain(|c| c.kind != READY);
    status.conditions.push(Condition {
        kind: READY.into(),
        status: ready.into(),
        reason: reason.into(),
        message,
        last_transition_time,
        observed_generation: view.generation,
    });
    status
}

fn observe_into(status: &mut ResourceStatus, seen: &Observed) {
    status.id = Some(seen.id);
    status.state = seen.state.clone();
    status.last_checked_at = seen.last_checked_at;
    status.open_incident_id = seen.open_incident_id.clone();
}

/// When to visit the resource again after `outcome`.
pub fn requeue_after(kind: Kind, outcome: &Outcome, timing: &Timing) -> Duration {
    match outcome {
        Outcome::Applied(_) | Outcome::Observed(_) => match kind {
            Kind::Monitor => timing.observe_every.min(timing.reapply_every),
            Kind::AlertContact => timing.reapply_every,
        },
        Outcome::Refused { .. } | Outcome::Invalid(_) => timing.retry_refused,
        Outcome::Unreachable { .. } => timing.retry_unreachable,
    }
}

/// The API's error body as one line: `HTTP 400: invalid request body:
/// interval_secs: must be ...; target: ...` (the gateway's `details` and
/// the apply's `errors`); a body that is not the API's JSON is quoted as is.
pub fn api_error_message(status: u16, body: &str) -> String {
    let Ok(Value::Object(parsed)) = serde_json::from_str::<Value>(body) else {
        let text = body.trim();
        return if text.is_empty() {
            format!("HTTP {status}")
        } else {
            truncate(&format!("HTTP {status}: {text}"), MAX_MESSAGE_LEN)
        };
    };
    let mut message = format!("HTTP {status}");
    if let Some(error) = parsed.get("error").and_then(Value::as_str) {
        message.push_str(": ");
        message.push_str(error);
    }
    let details = ["details", "errors"]
        .iter()
        .filter_map(|k| parsed.get(*k).and_then(Value::as_array))
        .flatten()
        .map(|d| {
            let field = d.get("field").and_then(Value::as_str).unwrap_or("");
            let text = d.get("message").and_then(Value::as_str).unwrap_or("");
            if field.is_empty() {
                text.to_string()
            } else {
                format!("{field}: {text}")
            }
        })
        .collect::<Vec<_>>();
    if !details.is_empty() {
        message.push_str(": ");
        message.push_str(&details.join("; "));
    }
    truncate(&message, MAX_MESSAGE_LEN)
}

fn truncate(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max.saturating_sub(3);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
