//! What a key reaches. A key's label selector narrows it to the monitors
//! whose labels hold the selector, and that one rule decides everything of
//! a monitor: the monitor itself and what hangs off it (results, rounds,
//! incidents, deliveries, metrics, badges, dependencies, audit entries) are
//! read through [`AuthUser::reach`] (`uptime_db::reach::Reach`, whose
//! queries apply the rule), and what names monitors (a maintenance
//! window, a status page) is the key's when everything it names is
//! ([`covers`]): every monitor id one the key reaches, and every label
//! selector at least as narrow as the key's, so it cannot cover a monitor
//! the key does not reach. What is out of reach is answered as another
//! organisation's is: `404`, or absent from lists.
//!
//! Everything else (contacts, escalation policies, keys, members, the
//! organisation) follows the key's scope alone.

use crate::access::principal::AuthUser;
use serde_json::Value;
use std::collections::HashSet;
use uptime_db::DbResult;
use uptime_labels::{Labels, Selector};

/// The monitors a window or a page names: by id, and by label selector.
#[derive(Debug, Default, Clone)]
pub struct Named {
    pub ids: Vec<i64>,
    /// JSON objects of key -> value.
    pub selectors: Vec<Value>,
}

impl Named {
    /// What a maintenance window names.
    pub fn window(monitor_ids: &[i64], label_selector: Option<&Value>) -> Self {
        Self {
            ids: monitor_ids.to_vec(),
            selectors: label_selector.into_iter().cloned().collect(),
        }
    }

    /// What a status page's stored `groups` (`[{"monitor_ids", "selector"}]`)
    /// name.
    pub fn page_groups(groups: &Value) -> Self {
        let mut named = Self::default();
        for group in groups.as_array().into_iter().flatten() {
            named.ids.extend(
                group["monitor_ids"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_i64),
            );
            if group["selector"].is_object() {
                named.selectors.push(group["selector"].clone());
            }
        }
        named
    }
}

impl AuthUser {
    /// Whether `selector` (a JSON object) selects only monitors the key
    /// reaches: it holds every pair of the key's selector, if any.
    pub fn holds_selector(&self, selector: &Value) -> bool {
        self.label_selector
            .as_deref()
            .is_none_or(|key| Selector(Labels::from_json(selector)).within(&key.selector))
    }
}

/// Whether everything `named` names is within the caller's reach.
pub async fn covers(
    conn: &mut diesel_async::AsyncPgConnection,
    user: &AuthUser,
    named: &Named,
) -> DbResult<bool> {
    Ok(covered(conn, user, vec![named.clone()], Clone::clone)
        .await?
        .len()
        == 1)
}

/// The `items` whose named monitors are all within the caller's reach, in
/// their order (one query for all of them).
pub async fn covered<T>(
    conn: &mut diesel_async::AsyncPgConnection,
    user: &AuthUser,
    items: Vec<T>,
    named: impl Fn(&T) -> Named,
) -> DbResult<Vec<T>> {
    let reach = user.reach();
    if !reach.is_limited() {
        return Ok(items);
    }
    let names: Vec<Named> = items.iter().map(&named).collect();
    let mut ids: Vec<i64> = names.iter().flat_map(|n| n.ids.iter().copied()).collect();
    ids.sort_unstable();
    ids.dedup();
    let reached: HashSet<i64> = reach.reached_among(conn, &ids).await?;
    Ok(items
        .into_iter()
        .zip(names)
        .filter(|(_, n)| {
            n.ids.iter().all(|id| reached.contains(id))
                && n.selectors.iter().all(|s| user.holds_selector(s))
        })
        .map(|(item, _)| item)
        .collect())
}
