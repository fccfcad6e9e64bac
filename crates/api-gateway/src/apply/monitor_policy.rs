//! The escalation policy a monitor alerts through, in an apply: the
//! `escalation_policy_id`/`escalation_policy_ref` of a monitor's spec,
//! which the monitor's own body has no field for. Its policy is written
//! as `PUT /api/v1/monitors/{id}/escalation-policy` writes it, after the
//! monitor (and cleared before it, when it changes).

use crate::apply::changes::FieldChange;
use crate::audit;
use crate::auth::AuthUser;
use crate::error::ApiError;
use diesel_async::AsyncPgConnection;
use serde_json::{json, Value};
use std::collections::HashMap;

/// Takes the policy a monitor's resolved spec names out of it (the
/// monitor's own body has no such field), beside the one the stored
/// monitor `monitor_id` alerts through (`stored`: the policies of the
/// managed monitors, by monitor id).
pub(super) fn split_link(
    stored: &HashMap<i64, i64>,
    mut spec: Value,
    monitor_id: Option<i64>,
) -> Result<(Value, PolicyLink), ApiError> {
    let field = "escalation_policy_id";
    let given = spec.as_object_mut().and_then(|o| o.remove(field));
    let wanted = match given {
        None | Some(Value::Null) => None,
        Some(value) => Some(value.as_i64().ok_or_else(|| {
            ApiError::invalid_field(field, "must be an escalation policy's id, or null")
        })?),
    };
    let has_contacts = spec
        .get("alert_contact_ids")
        .and_then(Value::as_array)
        .is_some_and(|ids| !ids.is_empty());
    if wanted.is_some() && has_contacts {
        return Err(ApiError::invalid_field(
            field,
            "a monitor alerts through a policy or its alert contacts, not both",
        ));
    }
    let stored = monitor_id.and_then(|id| stored.get(&id).copied());
    Ok((spec, PolicyLink { stored, wanted }))
}

/// The policy a monitor alerts through: as stored, and as the spec wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct PolicyLink {
    pub(super) stored: Option<i64>,
    pub(super) wanted: Option<i64>,
}

impl PolicyLink {
    pub(super) fn changes(&self) -> bool {
        self.stored != self.wanted
    }

    /// The plan's line for it.
    pub(super) fn change(&self) -> FieldChange {
        FieldChange {
            field: "escalation_policy_id".into(),
            before: json!(self.stored),
            after: json!(self.wanted),
        }
    }
}

/// Points the monitors whose policy changes away from their stored one,
/// before their rows are written (a monitor given contacts must not alert
/// through a policy at that moment). `links`: `(monitor id, link)`.
pub(super) async fn clear_links(
    c: &mut AsyncPgConnection,
    links: &[(i64, PolicyLink)],
) -> Result<(), ApiError> {
    for (monitor_id, link) in links {
        if link.stored.is_some() && link.changes() {
            uptime_db::escalation_policies::set_for_monitor(c, *monitor_id, None).await?;
        }
    }
    Ok(())
}

/// Points monitor `monitor_id` at the policy it wants, once written (its
/// policy checked to be the organisation's, locked until commit), with the
/// monitor's update entry as `PUT .../escalation-policy` writes it.
pub(super) async fn set_link(
    c: &mut AsyncPgConnection,
    user: &AuthUser,
    monitor_id: i64,
    link: PolicyLink,
) -> Result<(), ApiError> {
    if !link.changes() {
        return Ok(());
    }
    if let Some(policy_id) = link.wanted {
        if uptime_db::escalation_policies::get(c, user.org_id, policy_id, true)
            .await?
            .is_none()
        {
            return Err(ApiError::invalid_field(
                "escalation_policy_id",
                format!("no such escalation policy: {policy_id}"),
            ));
        }
        uptime_db::escalation_policies::set_for_monitor(c, monitor_id, Some(policy_id)).await?;
    }
    audit::record(
        c,
        user,
        audit::action::UPDATE,
        audit::kind::MONITOR,
        Some(monitor_id),
        json!({"escalation_policy_id": {"before": link.stored, "after": link.wanted}}),
    )
    .await
}
