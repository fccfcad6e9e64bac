//! The pure core of an apply: which stored resource each desired one is,
//! which stored ones go, how refs between resources become ids, and the
//! order in which monitors that depend on each other are created. No
//! database and no clock: the route loads the stored state and carries the
//! result out.

use super::request::Kind;
use crate::error::FieldError;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap, HashSet};

/// A resource's identity across applies.
pub type Key = (Kind, String);

/// The stored resources that carry a ref: their ids by (kind, ref).
pub type Stored = BTreeMap<Key, i64>;

/// Desired resources matched to stored ones.
#[derive(Debug, PartialEq, Eq)]
pub struct Matching {
    /// For each desired resource, in request order, the stored one it is
    /// (`None`: to create).
    pub existing: Vec<Option<i64>>,
    /// Stored resources absent from the request: dependents first (monitors
    /// before the contacts they may name), then by id.
    pub absent: Vec<(Key, i64)>,
}

/// Matches `desired` (request order) against `stored`. Every stored
/// resource with a ref of a kind the apply manages that the request does
/// not name is absent; resources without a ref are not in `stored`, so they
/// are never absent (never deleted).
pub fn match_resources(desired: &[Key], stored: &Stored) -> Matching {
    let named: HashSet<&Key> = desired.iter().collect();
    let existing = desired.iter().map(|key| stored.get(key).copied()).collect();
    let mut absent: Vec<(Key, i64)> = stored
        .iter()
        .filter(|(key, _)| !named.contains(key))
        .map(|(key, id)| (key.clone(), *id))
        .collect();
    // Dependents first: the reverse of the order kinds are written in.
    absent.sort_by_key(|((kind, _), id)| (std::cmp::Reverse(*kind), *id));
    Matching { existing, absent }
}

/// The index of each resource that repeats an earlier (kind, ref).
pub fn duplicates(desired: &[Key]) -> Vec<usize> {
    let mut seen = HashSet::new();
    desired
        .iter()
        .enumerate()
        .filter(|(_, key)| !seen.insert(*key))
        .map(|(i, _)| i)
        .collect()
}

/// The ids refs resolve to: stored resources, and those the request
/// creates (a placeholder until written: planning never needs the real id,
/// and a dry run never has one).
#[derive(Debug, Clone, Default)]
pub struct RefTable {
    ids: HashMap<Key, i64>,
}

impl RefTable {
    /// Stored resources (less those the apply deletes) and the request's
    /// own, each created one at a distinct negative placeholder.
    pub fn new(stored: &Stored, deleted: &[(Key, i64)], desired: &[Key]) -> Self {
        let gone: HashSet<&Key> = deleted.iter().map(|(key, _)| key).collect();
        let mut ids: HashMap<Key, i64> = stored
            .iter()
            .filter(|(key, _)| !gone.contains(key))
            .map(|(key, id)| (key.clone(), *id))
            .collect();
        for (i, key) in desired.iter().enumerate() {
            let placeholder = -1 - i64::try_from(i).unwrap_or(i64::MAX - 1);
            ids.entry(key.clone()).or_insert(placeholder);
        }
        Self { ids }
    }

    /// The created resource's real id.
    pub fn created(&mut self, key: Key, id: i64) {
        self.ids.insert(key, id);
    }

    pub fn get(&self, kind: Kind, r#ref: &str) -> Option<i64> {
        self.ids.get(&(kind, r#ref.to_string())).copied()
    }
}

/// A field of a spec that names other resources by ref instead of by id.
struct RefField {
    /// The list of objects the field is in (`groups`, `steps`), or `None`
    /// for a field of the spec itself.
    within: Option<&'static str>,
    refs: &'static str,
    ids: &'static str,
    kind: Kind,
    /// One resource (`escalation_policy_ref`), not a list.
    single: bool,
}

impl RefField {
    const fn list(refs: &'static str, ids: &'static str, kind: Kind) -> Self {
        Self {
            within: None,
            refs,
            ids,
            kind,
            single: false,
        }
    }
}

/// The ref forms each kind's spec may use.
fn ref_fields(kind: Kind) -> &'static [RefField] {
    const MONITOR: &[RefField] = &[
        RefField::list(
            "alert_contact_refs",
            "alert_contact_ids",
            Kind::AlertContact,
        ),
        RefField::list("depends_on_refs", "depends_on", Kind::Monitor),
        RefField {
            within: None,
            refs: "escalation_policy_ref",
            ids: "escalation_policy_id",
            kind: Kind::EscalationPolicy,
            single: true,
        },
    ];
    const WINDOW: &[RefField] = &[RefField::list("monitor_refs", "monitor_ids", Kind::Monitor)];
    const PAGE: &[RefField] = &[RefField {
        within: Some("groups"),
        ..RefField::list("monitor_refs", "monitor_ids", Kind::Monitor)
    }];
    const POLICY: &[RefField] = &[RefField {
        within: Some("steps"),
        ..RefField::list("contact_refs", "contact_ids", Kind::AlertContact)
    }];
    match kind {
        Kind::Monitor => MONITOR,
        Kind::MaintenanceWindow => WINDOW,
        Kind::StatusPage => PAGE,
        Kind::EscalationPolicy => POLICY,
        Kind::AlertContact => &[],
    }
}

/// The refs a monitor's spec depends on (`depends_on_refs`), for
/// [`creation_order`].
pub fn depends_on_refs(spec: &Value) -> Vec<String> {
    spec.get("depends_on_refs")
        .and_then(Value::as_array)
        .map(|refs| {
            refs.iter()
                .filter_map(|r| r.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The spec as the kind's create body: each ref form replaced by the ids
/// its refs resolve to, `ref` (which the resource gives beside its spec)
/// left out. Every problem is a field of the spec: not an object, a field
/// in both forms, a ref form that is not a list of strings, a ref that
/// resolves to nothing.
pub fn resolved_spec(
    kind: Kind,
    r#ref: &str,
    spec: &Value,
    table: &RefTable,
) -> Result<Value, Vec<FieldError>> {
    let Some(object) = spec.as_object() else {
        return Err(vec![FieldError::new("spec", "must be an object")]);
    };
    let mut out: Map<String, Value> = object.clone();
    let mut problems = Vec::new();
    match out.remove("ref") {
        Some(Value::String(given)) if given == r#ref => {}
        Some(_) => problems.push(FieldError::new(
            "spec.ref",
            "give the ref beside the spec (`ref`), not in it",
        )),
        None => {}
    }
    for field in ref_fields(kind) {
        match field.within {
            None => resolve_field(&mut out, field, "spec", table, &mut problems),
            Some(list) => {
                if let Some(Value::Array(items)) = out.get_mut(list) {
                    for (i, item) in items.iter_mut().enumerate() {
                        if let Some(object) = item.as_object_mut() {
                            let at = format!("spec.{list}[{i}]");
                            resolve_field(object, field, &at, table, &mut problems);
                        }
                    }
                }
            }
        }
    }
    if problems.is_empty() {
        Ok(Value::Object(out))
    } else {
        Err(problems)
    }
}

/// Replaces `field`'s ref form in `object` (at `at`) by the id form, the
/// refs resolved through `table`; each problem named by its field.
fn resolve_field(
    object: &mut Map<String, Value>,
    field: &RefField,
    at: &str,
    table: &RefTable,
    problems: &mut Vec<FieldError>,
) {
    let Some(given) = object.remove(field.refs) else {
        return;
    };
    let name = format!("{at}.{}", field.refs);
    if object.contains_key(field.ids) {
        problems.push(FieldError::new(
            &name,
            format!("give `{}` or `{}`, not both", field.refs, field.ids),
        ));
        return;
    }
    let resolve = |wanted: &str, problems: &mut Vec<FieldError>| match table.get(field.kind, wanted)
    {
        Some(id) => Some(Value::from(id)),
        None => {
            problems.push(FieldError::new(
                &name,
                format!(
                    "no {} with ref {wanted:?} in the request or the organisation",
                    field.kind.as_str()
                ),
            ));
            None
        }
    };
    if field.single {
        let id = match &given {
            Value::Null => Some(Value::Null),
            Value::String(wanted) => resolve(wanted.as_str(), problems),
            _ => {
                problems.push(FieldError::new(&name, "must be a ref or null"));
                None
            }
        };
        if let Some(id) = id {
            object.insert(field.ids.to_string(), id);
        }
        return;
    }
    let Some(refs) = given
        .as_array()
        .and_then(|all| all.iter().map(Value::as_str).collect::<Option<Vec<_>>>())
    else {
        problems.push(FieldError::new(&name, "must be a list of refs"));
        return;
    };
    let ids: Vec<Value> = refs
        .into_iter()
        .filter_map(|wanted| resolve(wanted, problems))
        .collect();
    object.insert(field.ids.to_string(), Value::Array(ids));
}

/// The order in which to write the request's monitors (given as their
/// refs and the refs each depends on, request order): every monitor after
/// those of the request it depends on, otherwise request order. `Err`
/// names the positions of monitors on a cycle (which nothing can create).
pub fn creation_order(monitors: &[(String, Vec<String>)]) -> Result<Vec<usize>, Vec<usize>> {
    let position: HashMap<&str, usize> = monitors
        .iter()
        .enumerate()
        .map(|(i, (r, _))| (r.as_str(), i))
        .collect();
    let mut waiting_on: Vec<usize> = vec![0; monitors.len()];
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); monitors.len()];
    for (i, (_, deps)) in monitors.iter().enumerate() {
        let mut seen = HashSet::new();
        for dep in deps {
            if let Some(&j) = position.get(dep.as_str()) {
                if seen.insert(j) {
                    waiting_on[i] += 1;
                    dependents[j].push(i);
                }
            }
        }
    }
    // Ready monitors in request order (a min-heap of positions).
    let mut ready: std::collections::BTreeSet<usize> = (0..monitors.len())
        .filter(|&i| waiting_on[i] == 0)
        .collect();
    let mut order = Vec::with_capacity(monitors.len());
    while let Some(i) = ready.pop_first() {
        order.push(i);
        for &d in &dependents[i] {
            waiting_on[d] -= 1;
            if waiting_on[d] == 0 {
                ready.insert(d);
            }
        }
    }
    if order.len() == monitors.len() {
        Ok(order)
    } else {
        Err((0..monitors.len()).filter(|&i| waiting_on[i] > 0).collect())
    }
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
