//! Who may call what: the one table of every `/api/v1` route and the access
//! it needs, enforced for every route by `middleware::authenticate` (through
//! [`authorise`]) and written into the OpenAPI document by [`annotate`].
//!
//! A key's effective scope is the narrower of the scope it was issued with
//! and the widest its holder's role allows now (viewer → read, editor →
//! write, admin and owner → admin), so demoting a member narrows their keys
//! at once. A route missing from [`ROUTES`] is refused to every key (fail
//! closed), and `tests/it/authz.rs` fails for it, so a new route cannot ship
//! without a declared access.
//!
//! Rules finer than a route (an editor revokes only their own keys) are the
//! handlers', through [`AuthUser::may_manage_keys_of_others`] and friends;
//! the table's `note` says so, and docs/api.md shows both.

use crate::error::ApiError;
pub use crate::principal::widest_scope;
use crate::principal::AuthUser;
use serde_json::{json, Value};
use uptime_db::organisations::{Role, Scope};

/// What a route needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// No key: public, or the path's token is the credential.
    Public,
    /// A key whose effective scope is at least this.
    Scope(Scope),
    /// An admin-scoped key of an owner.
    Owner,
}

impl Access {
    /// As written in docs/api.md's table and `x-required-scope`.
    pub fn name(self) -> &'static str {
        match self {
            Access::Public => "none",
            Access::Scope(scope) => scope.as_str(),
            Access::Owner => "owner",
        }
    }
}

/// One route: method, path pattern as actix matches it, and its access.
#[derive(Debug, Clone, Copy)]
pub struct RouteAccess {
    pub method: &'static str,
    pub path: &'static str,
    pub access: Access,
    /// A rule beyond the scope, if any (shown in the docs and the document).
    pub note: &'static str,
}

const fn route(method: &'static str, path: &'static str, access: Access) -> RouteAccess {
    RouteAccess {
        method,
        path,
        access,
        note: "",
    }
}

const fn noted(
    method: &'static str,
    path: &'static str,
    access: Access,
    note: &'static str,
) -> RouteAccess {
    RouteAccess {
        method,
        path,
        access,
        note,
    }
}

const READ: Access = Access::Scope(Scope::Read);
const WRITE: Access = Access::Scope(Scope::Write);
const ADMIN: Access = Access::Scope(Scope::Admin);
const PUBLIC: Access = Access::Public;
const OWNER: Access = Access::Owner;

/// Every `/api/v1` route. docs/api.md holds the same table (a test compares
/// them), and every operation of the OpenAPI document must be here.
pub const ROUTES: &[RouteAccess] = &[
    route("GET", "/api/v1/openapi.json", PUBLIC),
    route("GET", "/api/v1/monitors", READ),
    route("POST", "/api/v1/monitors", WRITE),
    route("POST", "/api/v1/monitors/bulk", WRITE),
    route("GET", "/api/v1/monitors/{id}", READ),
    route("PATCH", "/api/v1/monitors/{id}", WRITE),
    route("DELETE", "/api/v1/monitors/{id}", WRITE),
    route("GET", "/api/v1/monitors/by-ref/{ref}", READ),
    route("PUT", "/api/v1/monitors/by-ref/{ref}", WRITE),
    route("DELETE", "/api/v1/monitors/by-ref/{ref}", WRITE),
    route("GET", "/api/v1/alert-contacts/by-ref/{ref}", READ),
    route("PUT", "/api/v1/alert-contacts/by-ref/{ref}", WRITE),
    route("DELETE", "/api/v1/alert-contacts/by-ref/{ref}", WRITE),
    route("GET", "/api/v1/maintenance-windows/by-ref/{ref}", READ),
    route("PUT", "/api/v1/maintenance-windows/by-ref/{ref}", WRITE),
    route("DELETE", "/api/v1/maintenance-windows/by-ref/{ref}", WRITE),
    route("GET", "/api/v1/status-pages/by-ref/{ref}", READ),
    route("PUT", "/api/v1/status-pages/by-ref/{ref}", WRITE),
    route("DELETE", "/api/v1/status-pages/by-ref/{ref}", WRITE),
    route("GET", "/api/v1/escalation-policies/by-ref/{ref}", READ),
    route("PUT", "/api/v1/escalation-policies/by-ref/{ref}", WRITE),
    route("DELETE", "/api/v1/escalation-policies/by-ref/{ref}", WRITE),
    route("POST", "/api/v1/apply", WRITE),
    route("POST", "/api/v1/monitors/{id}/check", WRITE),
    route("GET", "/api/v1/monitors/{id}/results", READ),
    route("GET", "/api/v1/monitors/{id}/rounds", READ),
    route("GET", "/api/v1/monitors/{id}/uptime/daily", READ),
    route("GET", "/api/v1/alert-contacts", READ),
    route("POST", "/api/v1/alert-contacts", WRITE),
    route("GET", "/api/v1/alert-contacts/{id}", READ),
    route("PATCH", "/api/v1/alert-contacts/{id}", WRITE),
    route("DELETE", "/api/v1/alert-contacts/{id}", WRITE),
    route(
        "POST",
        "/api/v1/alert-contacts/{id}/resend-verification",
        WRITE,
    ),
    route("POST", "/api/v1/alert-contacts/{id}/test", WRITE),
    route("GET", "/api/v1/alert-contacts/{id}/deliveries", READ),
    route("GET", "/api/v1/alert-contacts/verify/{token}", PUBLIC),
    noted(
        "GET",
        "/api/v1/api-keys",
        READ,
        "the caller's own keys; every member's with admin",
    ),
    noted(
        "POST",
        "/api/v1/api-keys",
        WRITE,
        "the new key's scope is at most the caller's",
    ),
    noted(
        "GET",
        "/api/v1/api-keys/{id}",
        READ,
        "another member's key needs admin",
    ),
    noted(
        "DELETE",
        "/api/v1/api-keys/{id}",
        WRITE,
        "another member's key needs admin",
    ),
    route("GET", "/api/v1/audit-log", ADMIN),
    route("GET", "/api/v1/organisation", READ),
    route("PATCH", "/api/v1/organisation", ADMIN),
    route("DELETE", "/api/v1/organisation", OWNER),
    route("GET", "/api/v1/members", READ),
    route("GET", "/api/v1/members/{id}", READ),
    noted(
        "PATCH",
        "/api/v1/members/{id}",
        ADMIN,
        "an admin grants at most admin and changes editors and viewers only",
    ),
    noted(
        "DELETE",
        "/api/v1/members/{id}",
        WRITE,
        "your own id leaves; another member needs admin, and an owner or admin needs an owner",
    ),
    route("GET", "/api/v1/invitations", ADMIN),
    noted(
        "POST",
        "/api/v1/invitations",
        ADMIN,
        "the role is at most the inviter's; only owners invite owners",
    ),
    route("GET", "/api/v1/invitations/{id}", ADMIN),
    route("DELETE", "/api/v1/invitations/{id}", ADMIN),
    noted(
        "POST",
        "/api/v1/invitations/{id}/resend",
        ADMIN,
        "a new token; limited like verification resends",
    ),
    noted(
        "POST",
        "/api/v1/invitations/accept",
        PUBLIC,
        "the token is the credential; a key, if sent, says who joins",
    ),
    route("GET", "/api/v1/incidents", READ),
    route("GET", "/api/v1/incidents/{id}", READ),
    route("POST", "/api/v1/incidents/{id}/acknowledge", WRITE),
    route("GET", "/api/v1/incidents/ack/{token}", PUBLIC),
    route("POST", "/api/v1/incidents/ack/{token}", PUBLIC),
    route("GET", "/api/v1/maintenance-windows", READ),
    route("POST", "/api/v1/maintenance-windows", WRITE),
    route("GET", "/api/v1/maintenance-windows/{id}", READ),
    route("PATCH", "/api/v1/maintenance-windows/{id}", WRITE),
    route("DELETE", "/api/v1/maintenance-windows/{id}", WRITE),
    route("GET", "/api/v1/escalation-policies", READ),
    route("POST", "/api/v1/escalation-policies", WRITE),
    route("GET", "/api/v1/escalation-policies/{id}", READ),
    route("PATCH", "/api/v1/escalation-policies/{id}", WRITE),
    route("DELETE", "/api/v1/escalation-policies/{id}", WRITE),
    route("GET", "/api/v1/monitors/{id}/escalation-policy", READ),
    route("PUT", "/api/v1/monitors/{id}/escalation-policy", WRITE),
    route("GET", "/api/v1/regions", READ),
    route("GET", "/api/v1/usage", READ),
    route("GET", "/api/v1/metrics", READ),
    route("GET", "/api/v1/status-pages", READ),
    route("POST", "/api/v1/status-pages", WRITE),
    route("GET", "/api/v1/status-pages/{id}", READ),
    route("PATCH", "/api/v1/status-pages/{id}", WRITE),
    route("DELETE", "/api/v1/status-pages/{id}", WRITE),
    route("POST", "/api/v1/status-pages/{id}/access-token", WRITE),
    route("GET", "/api/v1/status-pages/{id}/notices", READ),
    route("POST", "/api/v1/status-pages/{id}/notices", WRITE),
    route("GET", "/api/v1/status-pages/{id}/notices/{notice_id}", READ),
    route(
        "DELETE",
        "/api/v1/status-pages/{id}/notices/{notice_id}",
        WRITE,
    ),
    route(
        "POST",
        "/api/v1/status-pages/{id}/notices/{notice_id}/updates",
        WRITE,
    ),
    route("GET", "/api/v1/status-pages/{id}/subscribers", READ),
    route(
        "DELETE",
        "/api/v1/status-pages/{id}/subscribers/{subscriber_id}",
        WRITE,
    ),
    route("POST", "/api/v1/monitors/{id}/badge-token", WRITE),
    route("DELETE", "/api/v1/monitors/{id}/badge-token", WRITE),
    route("GET", "/api/v1/heartbeat/{token}", PUBLIC),
    route("HEAD", "/api/v1/heartbeat/{token}", PUBLIC),
    route("POST", "/api/v1/heartbeat/{token}", PUBLIC),
    route("GET", "/api/v1/heartbeat/{token}/fail", PUBLIC),
    route("HEAD", "/api/v1/heartbeat/{token}/fail", PUBLIC),
    route("POST", "/api/v1/heartbeat/{token}/fail", PUBLIC),
    route("GET", "/api/v1/heartbeat/{token}/start", PUBLIC),
    route("HEAD", "/api/v1/heartbeat/{token}/start", PUBLIC),
    route("POST", "/api/v1/heartbeat/{token}/start", PUBLIC),
    route("GET", "/api/v1/heartbeat/{token}/{exit_code}", PUBLIC),
    route("HEAD", "/api/v1/heartbeat/{token}/{exit_code}", PUBLIC),
    route("POST", "/api/v1/heartbeat/{token}/{exit_code}", PUBLIC),
];

/// The access of `method` on the route `pattern`; `None` when the table
/// does not declare it.
pub fn access_of(method: &str, pattern: &str) -> Option<RouteAccess> {
    ROUTES
        .iter()
        .find(|r| r.path == pattern && r.method.eq_ignore_ascii_case(method))
        .copied()
}

/// Whether a request to `pattern` (any method) must carry a key: every
/// route but those whose every declared method is public. A pattern the
/// table does not know needs one (fail closed).
pub fn needs_key(pattern: &str) -> bool {
    let mut declared = ROUTES.iter().filter(|r| r.path == pattern).peekable();
    declared.peek().is_none() || declared.any(|r| r.access != Access::Public)
}

/// 403 naming the scope when `principal` may not call `method` on
/// `pattern`. A method the table does not declare is refused: if the route
/// does not serve it either, actix answers 405 before any handler asks.
pub fn authorise(method: &str, pattern: &str, principal: AuthUser) -> Result<AuthUser, ApiError> {
    let Some(route) = access_of(method, pattern) else {
        return Err(forbidden(format!(
            "{method} {pattern} declares no scope; it is refused to every key"
        )));
    };
    match route.access {
        Access::Public => Ok(principal),
        Access::Scope(needed) if principal.scope >= needed => Ok(principal),
        Access::Scope(needed) => Err(forbidden(format!(
            "this operation needs a key with the {needed} scope; this key's is {}",
            principal.scope
        ))),
        Access::Owner if principal.role == Role::Owner && principal.scope == Scope::Admin => {
            Ok(principal)
        }
        Access::Owner => Err(forbidden(format!(
            "this operation needs an owner's key with the admin scope; this key is a{} {}'s with the {} scope",
            if principal.role == Role::Admin || principal.role == Role::Owner { "n" } else { "" },
            principal.role,
            principal.scope
        ))),
    }
}

/// `403 forbidden` on field `scope`.
pub fn forbidden(message: impl Into<String>) -> ApiError {
    ApiError::Forbidden {
        field: "scope",
        message: message.into(),
    }
}

/// Puts each operation's access into the OpenAPI document: the security
/// requirement's scopes, `x-required-scope`, a sentence in its description
/// and its `403`. Paths in the document are the routes' patterns.
pub fn annotate(doc: &mut Value) {
    let Some(paths) = doc["paths"].as_object_mut() else {
        return;
    };
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        for (method, op) in item.iter_mut() {
            let Some(route) = access_of(method, path) else {
                continue;
            };
            if route.access == Access::Public {
                continue;
            }
            let scope = match route.access {
                Access::Scope(scope) => scope,
                Access::Owner | Access::Public => Scope::Admin,
            };
            op["x-required-scope"] = json!(scope.as_str());
            if route.access == Access::Owner {
                op["x-required-role"] = json!("owner");
            }
            op["security"] = json!([{ "bearer": [scope.as_str()] }]);
            let mut sentence = match route.access {
                Access::Owner => "Needs an owner's key with the `admin` scope.".to_string(),
                _ => format!("Needs a key with the `{scope}` scope (or wider)."),
            };
            if !route.note.is_empty() {
                sentence.push_str(&format!(" Also: {}.", route.note));
            }
            let description = op["description"].as_str().unwrap_or_default();
            op["description"] = json!(if description.is_empty() {
                sentence
            } else {
                format!("{description}\n\n{sentence}")
            });
            if let Some(responses) = op["responses"].as_object_mut() {
                const SHORT: &str = "`forbidden`: the key's scope (or its holder's role) is short of what the operation needs (`details[].field`: `scope`)";
                match responses.get_mut("403") {
                    // Quotas answer 403 too: both are described.
                    Some(quota) => {
                        let before = quota["description"].as_str().unwrap_or_default();
                        quota["description"] = json!(format!("{SHORT}; or {before}"));
                    }
                    None => {
                        responses.insert(
                            "403".into(),
                            json!({
                                "description": SHORT,
                                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}},
                            }),
                        );
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_route_is_declared_once() {
        for (i, a) in ROUTES.iter().enumerate() {
            for b in &ROUTES[i + 1..] {
                assert!(
                    !(a.method == b.method && a.path == b.path),
                    "{} {} twice",
                    a.method,
                    a.path
                );
            }
        }
    }

    #[test]
    fn roles_allow_their_widest_scope() {
        assert_eq!(widest_scope(Role::Viewer), Scope::Read);
        assert_eq!(widest_scope(Role::Editor), Scope::Write);
        assert_eq!(widest_scope(Role::Admin), Scope::Admin);
        assert_eq!(widest_scope(Role::Owner), Scope::Admin);
    }

    #[test]
    fn unknown_patterns_need_a_key_and_public_ones_do_not() {
        assert!(needs_key("/api/v1/something-new"));
        assert!(needs_key("/api/v1/monitors"));
        assert!(!needs_key("/api/v1/heartbeat/{token}"));
    }
}
