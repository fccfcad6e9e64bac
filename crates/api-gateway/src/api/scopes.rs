//! What each route needs, as the middleware enforces it: the kinds of
//! access, the rows of the scope table, and the lookups over the table the
//! gateway installed (`crate::authz::ROUTES`, built from every route's
//! declaration; below the routes, so the middleware that asks names no
//! route). Before the table is installed every route needs a key and none
//! is allowed (fail closed).

use crate::error::ApiError;
use crate::principal::AuthUser;
use std::sync::OnceLock;
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

pub const fn route(method: &'static str, path: &'static str, access: Access) -> RouteAccess {
    RouteAccess {
        method,
        path,
        access,
        note: "",
    }
}

pub const fn noted(
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

pub const READ: Access = Access::Scope(Scope::Read);
pub const WRITE: Access = Access::Scope(Scope::Write);
pub const ADMIN: Access = Access::Scope(Scope::Admin);
pub const PUBLIC: Access = Access::Public;
pub const OWNER: Access = Access::Owner;

static INSTALLED: OnceLock<&'static [RouteAccess]> = OnceLock::new();

/// Makes `table` the one the lookups below read (the first install wins:
/// every worker installs the same table).
pub fn install(table: &'static [RouteAccess]) {
    let _ = INSTALLED.set(table);
}

fn installed() -> &'static [RouteAccess] {
    INSTALLED.get().copied().unwrap_or_default()
}

/// The access of `method` on the route `pattern`; `None` when the table
/// does not declare it.
pub fn access_of(method: &str, pattern: &str) -> Option<RouteAccess> {
    installed()
        .iter()
        .find(|r| r.path == pattern && r.method.eq_ignore_ascii_case(method))
        .copied()
}

/// Whether a request to `pattern` (any method) must carry a key: every
/// route but those whose every declared method is public. A pattern the
/// table does not know needs one (fail closed).
pub fn needs_key(pattern: &str) -> bool {
    let mut declared = installed().iter().filter(|r| r.path == pattern).peekable();
    declared.peek().is_none() || declared.any(|r| r.access != Access::Public)
}

/// The routes that need no key: those whose every declared method is
/// public (the document marks the same operations as needing no key).
pub fn public_routes() -> Vec<&'static str> {
    let mut public: Vec<&'static str> = installed()
        .iter()
        .map(|r| r.path)
        .filter(|path| !needs_key(path))
        .collect();
    public.sort_unstable();
    public.dedup();
    public
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
