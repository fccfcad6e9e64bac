//! The reconcile decisions, free of I/O: what to do with a custom resource
//! ([`next_step`]), the body to send ([`apply_body`]), and the status and
//! the next visit once the API has answered ([`status_after`],
//! [`requeue_after`]). The clock is a parameter; the shell
//! ([`crate::reconcile`]) does the talking.

use crate::resources::{AlertContact, Condition, Monitor, ResourceStatus, SecretKeyRef};
use chrono::{DateTime, Utc};
use kube::ResourceExt;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
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
    fn new(reason: &'static str, message: impl Into<String>) -> Self {
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

/// The Secret keys the body needs, each once.
pub fn secret_keys(view: &ResourceView) -> BTreeSet<SecretKeyRef> {
    view.secret_fields
        .iter()
        .map(|f| f.secret_key_ref.clone())
        .collect()
}

/// A field of a monitor's spec that names other custom resources of the
/// namespace, and the API field of their ids it becomes (the apply's
/// `<field>_refs` form; see APPLY-CONTRACT.md).
struct RefField {
    names: &'static str,
    ids: &'static str,
    kind: Kind,
}

const MONITOR_REF_FIELDS: [RefField; 2] = [
    RefField {
        names: "alert_contact_refs",
        ids: "alert_contact_ids",
        kind: Kind::AlertContact,
    },
    RefField {
        names: "depends_on_refs",
        ids: "depends_on",
        kind: Kind::Monitor,
    },
];

fn ref_fields(kind: Kind) -> &'static [RefField] {
    match kind {
        Kind::Monitor => &MONITOR_REF_FIELDS,
        Kind::AlertContact => &[],
    }
}

/// The custom resources of the namespace the spec names (kind, name); the
/// API ids of those that have one come back to [`apply_body`]. A name that
/// is not a string is left to [`apply_body`] to refuse.
pub fn referenced(view: &ResourceView) -> BTreeSet<(Kind, String)> {
    ref_fields(view.kind)
        .iter()
        .filter_map(|f| Some((f.kind, view.body.get(f.names)?.as_array()?)))
        .flat_map(|(kind, names)| {
            names
                .iter()
                .filter_map(move |n| n.as_str().map(|n| (kind, n.to_string())))
        })
        .collect()
}

/// The body of the PUT: the spec's body with the names of custom resources
/// turned into the API ids of their resources (`alert_contact_refs` into
/// `alert_contact_ids`, `depends_on_refs` into `depends_on`: `PUT
/// .../by-ref` takes the create body, whose references are ids) and the
/// Secret values in their fields. `ids` holds the referenced resources that
/// have an id (see [`referenced`]), `secrets` the Secret keys that exist
/// (see [`secret_keys`]).
pub fn apply_body(
    view: &ResourceView,
    ids: &BTreeMap<(Kind, String), i64>,
    secrets: &BTreeMap<SecretKeyRef, String>,
) -> Result<Value, SpecProblem> {
    let mut body = view.body.clone();
    for field in ref_fields(view.kind) {
        let Some(names) = body.remove(field.names) else {
            continue;
        };
        if body.contains_key(field.ids) {
            return Err(SpecProblem::new(
                "InvalidSpec",
                format!("give {} or {}, not both", field.names, field.ids),
            ));
        }
        let resolved = resolve(field, &names, ids, &view.namespace)?;
        body.insert(field.ids.to_string(), resolved);
    }
    for secret in &view.secret_fields {
        let key = &secret.secret_key_ref;
        let value = secrets.get(key).ok_or_else(|| {
            SpecProblem::new(
                "SecretNotFound",
                format!(
                    "secret_fields {}: key {:?} of Secret {:?} not found in namespace {:?}",
                    secret.field, key.key, key.name, view.namespace
                ),
            )
        })?;
        set_path(&mut body, &secret.field, Value::String(value.clone()))?;
    }
    Ok(Value::Object(body))
}

/// The ids of the resources `names` (a list of custom resource names) stand
/// for, ascending and each once.
fn resolve(
    field: &RefField,
    names: &Value,
    ids: &BTreeMap<(Kind, String), i64>,
    namespace: &str,
) -> Result<Value, SpecProblem> {
    let not_names = || {
        SpecProblem::new(
            "InvalidSpec",
            format!(
                "{} must be a list of {} names",
                field.names,
                field.kind.as_str()
            ),
        )
    };
    let mut found = BTreeSet::new();
    for name in names.as_array().ok_or_else(not_names)? {
        let name = name.as_str().ok_or_else(not_names)?;
        let id = ids.get(&(field.kind, name.to_string())).ok_or_else(|| {
            SpecProblem::new(
                "ReferenceNotReady",
                format!(
                    "{}: {} {name:?} in namespace {namespace:?} does not exist or is not applied yet",
                    field.names,
                    field.kind.as_str()
                ),
            )
        })?;
        found.insert(*id);
    }
    Ok(Value::Array(found.into_iter().map(Value::from).collect()))
}

/// Sets `path` (dotted) in `body`, making the objects on the way.
fn set_path(body: &mut Map<String, Value>, path: &str, value: Value) -> Result<(), SpecProblem> {
    let not_object = |at: &str| {
        SpecProblem::new(
            "InvalidSpec",
            format!("secret_fields {path}: {at} is not an object in the spec"),
        )
    };
    let mut parts = path.split('.').peekable();
    let mut here = body;
    while let Some(part) = parts.next() {
        if part.is_empty() {
            return Err(SpecProblem::new(
                "InvalidSpec",
                format!("secret_fields: {path:?} is not a field path"),
            ));
        }
        if parts.peek().is_none() {
            here.insert(part.to_string(), value);
            return Ok(());
        }
        let next = here
            .entry(part.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        here = next.as_object_mut().ok_or_else(|| not_object(part))?;
    }
    Ok(())
}

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
