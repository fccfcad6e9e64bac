//! Who may call what: the one table of every `/api/v1` route and the access
//! it needs ([`ROUTES`], gathered from each route module's declaration,
//! `crate::api::table::routes!`), enforced for every route by
//! `middleware::authenticate` (through [`authorise`]) and written into the
//! OpenAPI document by [`annotate`].
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

use crate::api::scopes::route;
pub use crate::api::scopes::{
    authorise, forbidden, Access, RouteAccess, ADMIN, OWNER, PUBLIC, READ, WRITE,
};
use crate::openapi::shared::operations;
pub use crate::principal::widest_scope;
use serde_json::{json, Value};
use std::sync::OnceLock;
use uptime_db::organisations::Scope;

/// Routes registered by hand rather than through `routes!`: the document
/// itself (served outside `/api/v1`'s table of handlers).
const BY_HAND: &[RouteAccess] = &[route("GET", "/api/v1/openapi.json", PUBLIC)];

/// Every `/api/v1` route with its access. docs/api.md holds the same table
/// (a test compares them), and every operation of the OpenAPI document
/// must be here. `for route in ROUTES` and `ROUTES.iter()` read it.
pub const ROUTES: Table = Table;

/// [`ROUTES`]: built on first use from every route's declaration, and
/// installed then for the middleware's lookups.
#[derive(Clone, Copy)]
pub struct Table;

impl Table {
    fn rows(self) -> &'static [RouteAccess] {
        static BUILT: OnceLock<Vec<RouteAccess>> = OnceLock::new();
        let rows = BUILT.get_or_init(|| {
            let mut rows = BY_HAND.to_vec();
            rows.extend(crate::routes::all().accesses());
            rows
        });
        crate::api::scopes::install(rows);
        rows
    }
}

/// Builds [`ROUTES`] (once) and installs it for the middleware's lookups.
pub fn install() {
    ROUTES.rows();
}

/// The access of `method` on the route `pattern`; `None` when the table
/// does not declare it.
pub fn access_of(method: &str, pattern: &str) -> Option<RouteAccess> {
    install();
    crate::api::scopes::access_of(method, pattern)
}

/// Whether a request to `pattern` (any method) must carry a key (a pattern
/// the table does not know needs one).
pub fn needs_key(pattern: &str) -> bool {
    install();
    crate::api::scopes::needs_key(pattern)
}

/// The routes that need no key (their path or body carries its own
/// credential, or they are public).
pub fn public_routes() -> Vec<&'static str> {
    install();
    crate::api::scopes::public_routes()
}

impl std::ops::Deref for Table {
    type Target = [RouteAccess];

    fn deref(&self) -> &[RouteAccess] {
        self.rows()
    }
}

impl IntoIterator for Table {
    type Item = &'static RouteAccess;
    type IntoIter = std::slice::Iter<'static, RouteAccess>;

    fn into_iter(self) -> Self::IntoIter {
        self.rows().iter()
    }
}

/// Marks every operation that needs a key as needing the bearer scheme
/// (what [`annotate`] narrows to the scope), first, so that the passes
/// before it see which operations take a key without each annotation
/// saying so.
pub fn require_keys(doc: &mut Value) {
    for (path, method, op) in operations(doc) {
        if access_of(method, path).is_some_and(|route| route.access != Access::Public) {
            op["security"] = json!([{ "bearer": [] }]);
        }
    }
}

/// Puts each operation's access into the OpenAPI document: the security
/// requirement's scopes, `x-required-scope`, a sentence in its description
/// and its `403`. Paths in the document are the routes' patterns.
pub fn annotate(doc: &mut Value) {
    for (path, method, op) in operations(doc) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use uptime_db::organisations::Role;

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

    /// What `routes!` declares reaches both the table and the document,
    /// and what is registered by hand has its rows in [`BY_HAND`] and its
    /// operations in the document's list: the two name the same routes.
    #[test]
    fn the_table_and_the_document_name_the_same_operations() {
        let mut documented = std::collections::BTreeSet::new();
        for (path, item) in crate::openapi::document()["paths"]
            .as_object()
            .expect("paths")
        {
            for method in item.as_object().expect("a path item").keys() {
                documented.insert((method.to_uppercase(), path.clone()));
            }
        }
        let declared: std::collections::BTreeSet<_> = ROUTES
            .iter()
            .filter(|r| r.path != "/api/v1/openapi.json")
            .map(|r| (r.method.to_string(), r.path.to_string()))
            .collect();
        assert_eq!(declared, documented);
        assert!(declared.len() > 90, "{} routes", declared.len());
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
