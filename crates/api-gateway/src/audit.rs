//! Writes into the audit log: who (the key's holder and prefix,
//! from which address), what (action, resource) and how (the changed
//! fields, before → after), in the transaction of the change, so a write
//! that fails leaves no entry and one that commits leaves exactly one.
//!
//! Changes are computed from the resource's API representation before and
//! after, so they say what a client would have seen change. Secrets never
//! appear: their values become `"[changed]"` (or `"[set]"` / `"[removed]"`).

use crate::auth::AuthUser;
use crate::error::ApiError;
use diesel_async::AsyncPgConnection;
use serde::Serialize;
use serde_json::{json, Map, Value};

/// Fields whose values are never written to the log: credentials shown to
/// their owner in responses (webhook signing secrets, heartbeat tokens, the
/// raw key of a new API key) or taken as input (passwords).
const SECRET_FIELDS: &[&str] = &[
    "signing_secret",
    "heartbeat_token",
    "key",
    "password",
    "token",
    "access_token",
];

/// The kinds of resource the log names.
pub mod kind {
    pub const MONITOR: &str = "monitor";
    pub const ALERT_CONTACT: &str = "alert_contact";
    pub const API_KEY: &str = "api_key";
    /// A membership; the resource id is the member's user id.
    pub const MEMBER: &str = "member";
    pub const INVITATION: &str = "invitation";
    pub const ORGANISATION: &str = "organisation";
    /// Named by `changes.incident_id` (incident ids are UUIDs).
    pub const INCIDENT: &str = "incident";
    pub const STATUS_PAGE: &str = "status_page";
    pub const STATUS_PAGE_NOTICE: &str = "status_page_notice";
    /// An email subscriber of a status page (removed by the owner).
    pub const STATUS_PAGE_SUBSCRIBER: &str = "status_page_subscriber";
    /// A monitor's badge token; the resource id is the monitor's.
    pub const MONITOR_BADGE: &str = "monitor_badge";
    pub const MAINTENANCE_WINDOW: &str = "maintenance_window";
    pub const ESCALATION_POLICY: &str = "escalation_policy";
}

/// The actions the log names.
pub mod action {
    pub const CREATE: &str = "create";
    /// Many monitors at once: one entry, `changes.monitor_ids` names them.
    pub const BULK_CREATE: &str = "bulk_create";
    pub const UPDATE: &str = "update";
    pub const DELETE: &str = "delete";
    pub const REVOKE: &str = "revoke";
    /// An invitation accepted: the invitee joined (the entry's actor).
    pub const ACCEPT: &str = "accept";
    /// A member removed themselves.
    pub const LEAVE: &str = "leave";
    /// A monitor checked now, on request.
    pub const CHECK: &str = "check";
    /// A contact's verification email sent again.
    pub const RESEND_VERIFICATION: &str = "resend_verification";
    /// An invitation's email sent again, with a new token (the limits of
    /// resends count these entries: `uptime_db::invitation_resends`).
    pub const RESEND: &str = uptime_db::invitation_resends::RESEND_ACTION;
    /// A test alert sent to a contact.
    pub const TEST: &str = "test";
    /// A key used after an idle spell (`crate::key_use`).
    pub const USE: &str = "use";
    pub const ACKNOWLEDGE: &str = "acknowledge";
    /// A new token replaced the old one (status-page access, badges).
    pub const ROTATE: &str = "rotate";
}

/// A resource's representation for [`changes`]: its response as JSON.
pub fn shown<T: Serialize>(resource: &T) -> Value {
    serde_json::to_value(resource).unwrap_or(Value::Null)
}

/// The top-level fields that differ between `before` and `after` (either may
/// be absent: a create, a delete), as `{"field": {"before", "after"}}`, with
/// secrets hidden. Fields that only change by themselves every time (the
/// update time) are left out.
pub fn changes(before: Option<&Value>, after: Option<&Value>) -> Value {
    let empty = Map::new();
    let before = before.and_then(Value::as_object).unwrap_or(&empty);
    let after = after.and_then(Value::as_object).unwrap_or(&empty);
    let mut out = Map::new();
    let mut fields: Vec<&String> = before.keys().chain(after.keys()).collect();
    fields.sort();
    fields.dedup();
    for field in fields {
        if field == "updated_at" {
            continue;
        }
        let (b, a) = (
            before.get(field).unwrap_or(&Value::Null),
            after.get(field).unwrap_or(&Value::Null),
        );
        if b == a {
            continue;
        }
        let (b, a) = if SECRET_FIELDS.contains(&field.as_str()) {
            hidden(b, a)
        } else {
            (b.clone(), a.clone())
        };
        out.insert(field.clone(), json!({"before": b, "after": a}));
    }
    Value::Object(out)
}

fn hidden(before: &Value, after: &Value) -> (Value, Value) {
    match (before.is_null(), after.is_null()) {
        (true, false) => (Value::Null, json!("[set]")),
        (false, true) => (json!("[removed]"), Value::Null),
        _ => (json!("[changed]"), json!("[changed]")),
    }
}

/// Records one write by `user`. Call it inside the write's transaction.
pub async fn record(
    conn: &mut AsyncPgConnection,
    user: &AuthUser,
    action: &str,
    resource_kind: &str,
    resource_id: Option<i64>,
    changes: Value,
) -> Result<(), ApiError> {
    uptime_db::audit_log::record(
        conn,
        uptime_db::audit_log::NewAuditEntry {
            org_id: user.org_id,
            actor_user_id: user.user_id,
            key_prefix: user.key_prefix.as_str().to_string(),
            address: user.address.map(|a| a.to_string()),
            action: action.to_string(),
            resource_kind: resource_kind.to_string(),
            resource_id,
            changes,
        },
    )
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_changed_fields_are_kept_and_secrets_are_hidden() {
        let before =
            json!({"name": "a", "value": "x", "signing_secret": "whsec_1", "updated_at": 1});
        let after =
            json!({"name": "b", "value": "x", "signing_secret": "whsec_2", "updated_at": 2});
        assert_eq!(
            changes(Some(&before), Some(&after)),
            json!({
                "name": {"before": "a", "after": "b"},
                "signing_secret": {"before": "[changed]", "after": "[changed]"},
            })
        );
        let created = changes(None, Some(&json!({"id": 1, "key": "upt_secret"})));
        assert_eq!(
            created,
            json!({"id": {"before": null, "after": 1}, "key": {"before": null, "after": "[set]"}})
        );
        assert!(!created.to_string().contains("upt_secret"));
    }
}
