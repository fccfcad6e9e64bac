//! Writes into the audit log: who (the key's holder and prefix,
//! from which address), what (action, resource) and how (the changed
//! fields, before → after), in the transaction of the change, so a write
//! that fails leaves no entry and one that commits leaves exactly one.
//!
//! Changes are computed from the resource's API representation before and
//! after, so they say what a client would have seen change, plus its
//! write-only secrets ([`audited`]), which no representation shows but an
//! auditor must see change. Secrets never appear: their values become
//! `"[changed]"` (or `"[set]"` / `"[removed]"`).
//!
//! [`update`] is the one rule of every update: an update whose changes are
//! empty (the same representation, the same secrets) writes nothing.

use crate::access::principal::AuthUser;
use crate::http::error::ApiError;
use diesel_async::scoped_futures::{ScopedBoxFuture, ScopedFutureExt};
use diesel_async::{AsyncConnection, AsyncPgConnection};
use serde::Serialize;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

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
    /// A key used after an idle spell (`crate::access::key_use`).
    pub const USE: &str = "use";
    pub const ACKNOWLEDGE: &str = "acknowledge";
    /// A new token replaced the old one (status-page access, badges).
    pub const ROTATE: &str = "rotate";
}

/// The key of the object that stands for a write-only secret in an
/// [`audited`] representation. Never written to the log: [`changes`] turns
/// it into `"[changed]"`, `"[set]"` or `"[removed]"`.
const SECRET_MARK: &str = "$secret";

/// A resource's representation for [`changes`]: its response as JSON.
pub fn shown<T: Serialize>(resource: &T) -> Value {
    serde_json::to_value(resource).unwrap_or(Value::Null)
}

/// [`shown`] with the resource's write-only secrets, each under the field a
/// client writes it to (`"secret"`, `"basic_auth.password"`) and standing
/// for what is stored of it (a seal, a digest, a credential URL; `None`:
/// none is set). A field the response shows (redacted) is replaced. Each
/// kind names its secrets in one list beside its representation; adding a
/// secret to a kind is one entry there.
///
/// What is stored is digested here, so the representation carries no
/// secret even if it were kept; equal stored values compare equal, so a
/// write that keeps a seal (a secret restated unchanged) changes nothing.
pub fn audited<T: Serialize>(resource: &T, secrets: &[(&str, Option<&str>)]) -> Value {
    let mut value = shown(resource);
    if let Value::Object(fields) = &mut value {
        for (field, stored) in secrets {
            let marked = match stored {
                Some(stored) => {
                    let digest = Sha256::digest(stored.as_bytes());
                    json!({ SECRET_MARK: hex::encode(&digest[..12]) })
                }
                None => Value::Null,
            };
            fields.insert((*field).to_string(), marked);
        }
    }
    value
}

fn is_marked_secret(value: &Value) -> bool {
    value
        .as_object()
        .is_some_and(|o| o.len() == 1 && o.contains_key(SECRET_MARK))
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
        let secret =
            SECRET_FIELDS.contains(&field.as_str()) || is_marked_secret(b) || is_marked_secret(a);
        let (b, a) = if secret {
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

/// Whether [`changes`] found nothing.
pub fn is_empty(changes: &Value) -> bool {
    changes.as_object().is_none_or(Map::is_empty)
}

/// Why [`update`]'s savepoint was rolled back.
enum Rollback {
    /// The update changed nothing.
    Unchanged,
    Failed(ApiError),
}

impl From<diesel::result::Error> for Rollback {
    fn from(e: diesel::result::Error) -> Self {
        Rollback::Failed(e.into())
    }
}

/// Runs `write`, an update by `user` of the resource shown as `before`
/// ([`audited`]), which answers what it wrote and its representation
/// after, in a savepoint of the caller's transaction; keeps it with one
/// audit entry when it changed anything, and rolls it back (`None`) when
/// [`changes`] is empty. So an update that changes nothing writes nothing:
/// no new `updated_at` (a heartbeat's period starts from it), version,
/// `ETag` or audit entry, whichever route or kind it came through. The
/// caller answers the stored resource then, and announces nothing.
///
/// The comparison is the audit log's own (the representation, secrets
/// included, `updated_at` left out), so what counts as a change is decided
/// once.
pub async fn update<'a, T, F>(
    c: &mut AsyncPgConnection,
    user: &'a AuthUser,
    resource_kind: &'a str,
    resource_id: Option<i64>,
    before: &'a Value,
    write: F,
) -> Result<Option<T>, ApiError>
where
    T: Send + 'a,
    F: for<'r> FnOnce(
            &'r mut AsyncPgConnection,
        ) -> ScopedBoxFuture<'a, 'r, Result<(T, Value), ApiError>>
        + Send
        + 'a,
{
    let outcome = c
        .transaction::<_, Rollback, _>(|c| {
            async move {
                let (written, after) = write(c).await.map_err(Rollback::Failed)?;
                let changes = changes(Some(before), Some(&after));
                if is_empty(&changes) {
                    return Err(Rollback::Unchanged);
                }
                record(c, user, action::UPDATE, resource_kind, resource_id, changes)
                    .await
                    .map_err(Rollback::Failed)?;
                Ok(written)
            }
            .scope_boxed()
        })
        .await;
    match outcome {
        Ok(written) => Ok(Some(written)),
        Err(Rollback::Unchanged) => Ok(None),
        Err(Rollback::Failed(e)) => Err(e),
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

    #[test]
    fn write_only_secrets_are_compared_but_never_shown() {
        let shown = json!({"name": "a", "value": "https://hooks.example/redacted"});
        let with = |sealed: Option<&str>| {
            audited(
                &shown,
                &[
                    ("secret", sealed),
                    ("value", Some("https://hooks.example/T0K3N")),
                ],
            )
        };
        let (first, second) = (with(Some("v1.k1.one")), with(Some("v1.k1.two")));
        let changed = changes(Some(&first), Some(&second));
        assert_eq!(
            changed,
            json!({"secret": {"before": "[changed]", "after": "[changed]"}})
        );
        assert!(is_empty(&changes(
            Some(&first),
            Some(&with(Some("v1.k1.one")))
        )));
        assert_eq!(
            changes(Some(&with(None)), Some(&first))["secret"],
            json!({"before": null, "after": "[set]"})
        );
        let created = changes(None, Some(&first)).to_string();
        for leaked in ["T0K3N", "v1.k1", "redacted", SECRET_MARK] {
            assert!(!created.contains(leaked), "{leaked} in {created}");
        }
    }
}
