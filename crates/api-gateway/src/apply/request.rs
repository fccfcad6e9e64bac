//! The bodies of `POST /api/v1/apply` (the contract: /APPLY-CONTRACT.md,
//! docs/api.md "Monitoring as code").

use super::changes::FieldChange;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A kind of resource an apply manages, in the order an apply writes them
/// (each after the kinds it may name; deletes go the other way).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, ToSchema,
)]
pub enum Kind {
    /// Named by escalation policies and monitors.
    AlertContact,
    /// Names contacts; named by monitors.
    EscalationPolicy,
    /// Names contacts, policies and other monitors.
    Monitor,
    /// Name monitors.
    MaintenanceWindow,
    StatusPage,
}

impl Kind {
    /// Every kind, in the order an apply writes them.
    pub const ALL: [Kind; 5] = [
        Kind::AlertContact,
        Kind::EscalationPolicy,
        Kind::Monitor,
        Kind::MaintenanceWindow,
        Kind::StatusPage,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::AlertContact => "AlertContact",
            Kind::EscalationPolicy => "EscalationPolicy",
            Kind::Monitor => "Monitor",
            Kind::MaintenanceWindow => "MaintenanceWindow",
            Kind::StatusPage => "StatusPage",
        }
    }

    pub fn ref_kind(self) -> uptime_db::refs::RefKind {
        use uptime_db::refs::RefKind;
        match self {
            Kind::AlertContact => RefKind::AlertContact,
            Kind::EscalationPolicy => RefKind::EscalationPolicy,
            Kind::Monitor => RefKind::Monitor,
            Kind::MaintenanceWindow => RefKind::MaintenanceWindow,
            Kind::StatusPage => RefKind::StatusPage,
        }
    }
}

/// The desired set.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ApplyRequest {
    /// 0 to `apply.max_resources` (10,000 by default) resources, each
    /// `{"kind", "ref", "spec"}`; a (kind, ref) at most once.
    #[schema(value_type = Vec<ResourceInput>, max_items = 10000)]
    pub resources: Vec<serde_json::Value>,
    /// Only plan: nothing is written (default `false`). Refused exactly as
    /// the apply would be (quotas of the end state included): the plan is
    /// carried out and rolled back.
    #[serde(default)]
    pub dry_run: bool,
    /// Delete the organisation's resources that carry a ref and are absent
    /// from `resources` (of the kinds an apply manages); without it they are
    /// only listed (`"pruned": false`). Resources without a ref are never
    /// deleted. Default `false`.
    #[serde(default)]
    pub prune: bool,
}

/// One desired resource.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResourceInput {
    pub kind: Kind,
    /// The resource's ref (syntax as for `ref` in every body).
    #[serde(rename = "ref")]
    #[schema(
        min_length = 1,
        max_length = 255,
        pattern = "^[a-z0-9]([a-z0-9._-]{0,253}[a-z0-9])?$"
    )]
    pub r#ref: String,
    /// The kind's create body without `ref`. Where it names other resources
    /// by id, it may name them by ref instead: a monitor's
    /// `alert_contact_refs` (for `alert_contact_ids`), `depends_on_refs`
    /// (for `depends_on`) and `escalation_policy_ref` (for
    /// `escalation_policy_id`, which a monitor's spec takes in an apply: the
    /// policy it alerts through, none when absent); a window's
    /// `monitor_refs` (for `monitor_ids`); a status page group's
    /// `groups[i].monitor_refs`; a policy step's `steps[i].contact_refs` (for
    /// `contact_ids`). A ref resolves to a resource of this request or one
    /// the organisation has. One field is given in one form only.
    #[schema(value_type = Object)]
    pub spec: serde_json::Value,
}

/// What the plan does to a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Create,
    Update,
    Unchanged,
    Delete,
}

/// One entry of the plan.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PlanEntry {
    pub kind: Kind,
    #[serde(rename = "ref")]
    pub r#ref: String,
    pub action: Action,
    /// The resource's id: the stored one (update, unchanged, delete), the
    /// new one once created; absent on a dry run's create.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<i64>,
    /// Updates only: each changed field, before and after, in the form
    /// the API shows it (secrets as `"(secret)"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changes: Option<Vec<FieldChange>>,
    /// Deletes only: whether it was (or, on a dry run, would be) deleted:
    /// `false` without `prune`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pruned: Option<bool>,
}

/// How many entries of each action.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, ToSchema)]
pub struct Summary {
    pub create: usize,
    pub update: usize,
    pub unchanged: usize,
    pub delete: usize,
}

impl Summary {
    pub fn of(plan: &[PlanEntry]) -> Self {
        let mut summary = Self::default();
        for entry in plan {
            match entry.action {
                Action::Create => summary.create += 1,
                Action::Update => summary.update += 1,
                Action::Unchanged => summary.unchanged += 1,
                Action::Delete => summary.delete += 1,
            }
        }
        summary
    }
}

/// The answer: the plan, and whether it was carried out.
#[derive(Debug, Serialize, ToSchema)]
pub struct ApplyResponse {
    pub dry_run: bool,
    /// `true` when the plan was written (never on a dry run).
    pub applied: bool,
    pub summary: Summary,
    /// Creates, updates and unchanged in request order, then deletes.
    pub plan: Vec<PlanEntry>,
}

/// One problem with one resource of the request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct ResourceError {
    /// The resource's index in `resources`.
    pub index: usize,
    /// Its kind and ref, when they could be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<Kind>,
    #[serde(rename = "ref", skip_serializing_if = "Option::is_none")]
    pub r#ref: Option<String>,
    /// The field, from the resource (`spec.interval_secs`, `ref`, `kind`).
    pub field: String,
    pub message: String,
}

/// The refusal of an invalid set: nothing was written.
#[derive(Debug, Serialize, ToSchema)]
pub struct ApplyRefusal {
    /// `invalid request body`.
    pub error: String,
    /// The same problems as `errors`, each field prefixed by its resource
    /// (`resources[3].spec.interval_secs`), as every 400 names fields.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<crate::error::FieldError>,
    /// Every problem of every resource (the first 1000); absent when the
    /// body is refused as a whole (not an apply, too many resources, a bad
    /// header), which only `details` names.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<ResourceError>,
}
