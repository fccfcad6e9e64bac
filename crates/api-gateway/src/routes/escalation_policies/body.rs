//! The escalation policies' request and response bodies, and their bounds.

use crate::validation::Problems;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uptime_db::escalation_policies::{Policy, PolicyDefinition, Step};
use utoipa::ToSchema;

pub const MAX_NAME_CHARS: usize = 200;
pub const MAX_STEPS: usize = 10;
pub const MAX_CONTACTS_PER_STEP: usize = 20;
pub const MAX_REPEAT_COUNT: i16 = 9;

/// One step of a policy.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StepBody {
    /// The contacts this step notifies (the caller's organisation's), 1 to 20.
    #[schema(min_items = 1, max_items = 20)]
    pub contact_ids: Vec<i64>,
    /// How long an incident waits on this step, unacknowledged, before the
    /// next step is notified (after the last step: the next run, or the
    /// end). From `escalation.min_delay_secs` (60 unless configured) to
    /// 86400.
    #[schema(minimum = 0, maximum = 86400)]
    pub delay_secs: i64,
}

crate::refs::with_ref! {
    /// A new escalation policy.
    #[derive(Debug, Clone, Deserialize, ToSchema)]
    #[serde(deny_unknown_fields)]
    pub struct CreatePolicy {
        /// 1 to 200 characters.
        #[schema(min_length = 1, max_length = 200)]
        pub name: String,
        /// Steps in order, 1 to 10. Step 1 is notified when an incident opens
        /// (it is the monitor's contacts for every alert); each later step when
        /// the one before has waited its delay unacknowledged.
        #[schema(min_items = 1, max_items = 10)]
        pub steps: Vec<StepBody>,
        /// How many more times the whole policy runs after its last step, 0 to
        /// 9 (default 0: once).
        #[schema(minimum = 0, maximum = 9)]
        pub repeat_count: Option<i16>,
    }
    /// A stable name of the caller's choice (monitoring as code names the
    /// policy by it): 1 to 255 of lowercase letters, digits, `.`, `_`,
    /// `-`, alphanumeric at both ends; unique among the organisation's
    /// policies (`409` naming `ref` when taken) and immutable once set.
    create ref
}

crate::refs::with_ref! {
    /// A change: the fields given replace the stored ones (`steps` as a whole).
    #[derive(Debug, Clone, Deserialize, ToSchema)]
    #[serde(deny_unknown_fields)]
    pub struct UpdatePolicy {
        #[schema(min_length = 1, max_length = 200)]
        pub name: Option<String>,
        #[schema(min_items = 1, max_items = 10)]
        pub steps: Option<Vec<StepBody>>,
        #[schema(minimum = 0, maximum = 9)]
        pub repeat_count: Option<i16>,
    }
    /// Sets the ref of a policy that has none; repeating the current ref
    /// (or `null` while there is none) changes nothing; changing or
    /// removing a set ref is a `400` naming `ref`.
    update ref
}

crate::refs::with_ref! {
    #[derive(Debug, Clone, Serialize, ToSchema)]
    pub struct PolicyResponse {
        pub id: i64,
        pub name: String,
        pub steps: Vec<StepBody>,
        pub repeat_count: i16,
        pub created_at: DateTime<Utc>,
        pub updated_at: DateTime<Utc>,
    }
    /// The policy's ref; `null` when it has none.
    shown ref
}

impl From<Policy> for PolicyResponse {
    fn from(p: Policy) -> Self {
        Self {
            id: p.id,
            name: p.name,
            steps: p
                .steps
                .into_iter()
                .map(|s| StepBody {
                    contact_ids: s.contact_ids,
                    delay_secs: i64::from(s.delay_secs),
                })
                .collect(),
            repeat_count: p.repeat_count,
            created_at: p.created_at,
            updated_at: p.updated_at,
            ref_: None,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct PolicyList {
    pub escalation_policies: Vec<PolicyResponse>,
    /// Pass as `?cursor=` for the next page; `null` on the last page.
    pub next_cursor: Option<String>,
}

/// The monitor's escalation policy.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MonitorPolicyBody {
    /// The policy the monitor alerts through (`null`: none; the monitor
    /// then alerts its `alert_contact_ids`). A monitor with a policy has no
    /// `alert_contact_ids`.
    pub escalation_policy_id: Option<i64>,
}

/// The definition of `name`, `steps`, `repeat_count` after checking every
/// bound (each problem named by its field, `steps[1].delay_secs`); step
/// contacts sorted and deduplicated (their ownership is checked against the
/// database by the caller).
pub fn definition(
    problems: &mut Problems,
    name: &str,
    steps: &[StepBody],
    repeat_count: i16,
    min_delay_secs: u32,
) -> PolicyDefinition {
    problems.check_len("name", name, MAX_NAME_CHARS);
    if steps.is_empty() || steps.len() > MAX_STEPS {
        problems.add("steps", format!("must have 1 to {MAX_STEPS} steps"));
    }
    problems.check_range("repeat_count", repeat_count, 0..=MAX_REPEAT_COUNT);
    let max_delay = i64::from(uptime_config::MAX_STEP_DELAY_SECS);
    let min_delay = i64::from(min_delay_secs).min(max_delay);
    let steps = steps
        .iter()
        .take(MAX_STEPS)
        .enumerate()
        .map(|(i, s)| {
            problems.check_range(
                &format!("steps[{i}].delay_secs"),
                s.delay_secs,
                min_delay..=max_delay,
            );
            if s.contact_ids.is_empty() || s.contact_ids.len() > MAX_CONTACTS_PER_STEP {
                problems.add(
                    &format!("steps[{i}].contact_ids"),
                    format!("must name 1 to {MAX_CONTACTS_PER_STEP} contacts"),
                );
            }
            let mut contact_ids = s.contact_ids.clone();
            contact_ids.sort_unstable();
            contact_ids.dedup();
            Step {
                delay_secs: s.delay_secs.clamp(0, max_delay) as i32,
                contact_ids,
            }
        })
        .collect();
    PolicyDefinition {
        name: name.trim().to_string(),
        repeat_count,
        steps,
    }
}
