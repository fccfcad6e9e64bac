//! Who is calling: the principal every authenticated request carries (a
//! member of an organisation acting through one of their keys), and the
//! widest scope a role allows. Plain data, so the key cache, the scope
//! table and the extractor can all use it without depending on each other.

use crate::access::keys;
use std::sync::Arc;
use uptime_db::organisations::{Role, Scope};
use uptime_labels::{Labels, Selector};

/// The authenticated caller: a member of an organisation, through one of
/// their keys. Resources are the organisation's: queries filter by
/// `org_id`; `user_id` is who acts (the key's holder).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthUser {
    pub user_id: i64,
    pub org_id: i64,
    /// The holder's role in the organisation when the key was read.
    pub role: Role,
    /// What the key may do: the narrower of its issued scope and the widest
    /// `role` allows ([`widest_scope`]).
    pub scope: Scope,
    pub key_id: i64,
    pub key_prefix: KeyPrefix,
    /// The caller's address (the connection's peer), for the audit log.
    pub address: Option<std::net::IpAddr>,
    /// The key's label selector: it reaches only the monitors whose labels
    /// hold it (`None`: every monitor of the organisation). Shared, since
    /// the principal is cloned into every request the key makes.
    pub label_selector: Option<Arc<KeySelector>>,
}

/// A key's label selector, with the JSON object the database tests it as.
#[derive(Debug, PartialEq, Eq)]
pub struct KeySelector {
    pub selector: Selector,
    pub json: serde_json::Value,
}

impl KeySelector {
    pub fn new(selector: Selector) -> Self {
        let json = selector.to_json();
        Self { selector, json }
    }
}

impl AuthUser {
    pub fn of(key: &uptime_db::api_keys::ActiveKey) -> Self {
        Self {
            user_id: key.key.user_id,
            org_id: key.key.org_id,
            role: key.role,
            scope: key.scope.min(widest_scope(key.role)),
            key_id: key.key.id,
            key_prefix: KeyPrefix::of(&key.key.prefix),
            address: None,
            label_selector: key
                .key
                .label_selector
                .as_ref()
                .map(|json| Arc::new(KeySelector::new(Selector(Labels::from_json(json))))),
        }
    }

    /// The monitors the caller reaches: the organisation's, narrowed by the
    /// key's label selector.
    pub fn reach(&self) -> uptime_db::monitors::Reach<'_> {
        uptime_db::monitors::Reach {
            org_id: self.org_id,
            selector: self.label_selector.as_deref().map(|s| &s.json),
        }
    }

    /// Whether the caller may see and revoke other members' keys: a key
    /// with the admin scope (an owner's or an admin's). Others see and
    /// revoke only their own.
    pub fn may_manage_keys_of_others(&self) -> bool {
        self.scope >= Scope::Admin
    }

    /// Whether a monitor with `labels` is one the caller may create or
    /// leave behind: it holds the key's selector, if any.
    pub fn may_hold(&self, labels: &Labels) -> bool {
        self.label_selector
            .as_deref()
            .is_none_or(|s| s.selector.matches(labels))
    }
}

/// A key's shown prefix (`upt_` and 4 more characters), kept inline so the
/// principal stays `Copy`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyPrefix([u8; keys::SHOWN_PREFIX_LEN]);

impl KeyPrefix {
    /// The first [`keys::SHOWN_PREFIX_LEN`] bytes of `prefix` (shorter ones
    /// padded with `_`; stored prefixes are always that long and ASCII).
    pub fn of(prefix: &str) -> Self {
        let mut bytes = [b'_'; keys::SHOWN_PREFIX_LEN];
        for (to, from) in bytes.iter_mut().zip(prefix.bytes().filter(u8::is_ascii)) {
            *to = from;
        }
        Self(bytes)
    }

    pub fn as_str(&self) -> &str {
        // Only ASCII is ever stored (see `of`).
        std::str::from_utf8(&self.0).unwrap_or("")
    }
}

impl std::fmt::Debug for KeyPrefix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The widest scope `role` allows a key.
pub fn widest_scope(role: Role) -> Scope {
    match role {
        Role::Viewer => Scope::Read,
        Role::Editor => Scope::Write,
        Role::Admin | Role::Owner => Scope::Admin,
    }
}
