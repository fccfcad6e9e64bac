//! The body a custom resource's spec becomes: the names of other custom
//! resources turned into the API ids in their status, Secret values in
//! their fields. Free of I/O, like the rest of [`crate::plan`].

use crate::plan::{Kind, ResourceView, SpecProblem};
use crate::resources::SecretKeyRef;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// The Secret keys the body needs, each once.
pub fn secret_keys(view: &ResourceView) -> BTreeSet<SecretKeyRef> {
    view.secret_fields
        .iter()
        .map(|f| f.secret_key_ref.clone())
        .collect()
}

/// A field of a monitor's spec that names other custom resources of the
/// namespace, and the API field of their ids it becomes (the apply's
/// `<field>_refs` form; see APPLY-CONTRACT.md).
struct RefField {
    names: &'static str,
    ids: &'static str,
    kind: Kind,
}

const MONITOR_REF_FIELDS: [RefField; 2] = [
    RefField {
        names: "alert_contact_refs",
        ids: "alert_contact_ids",
        kind: Kind::AlertContact,
    },
    RefField {
        names: "depends_on_refs",
        ids: "depends_on",
        kind: Kind::Monitor,
    },
];

fn ref_fields(kind: Kind) -> &'static [RefField] {
    match kind {
        Kind::Monitor => &MONITOR_REF_FIELDS,
        Kind::AlertContact => &[],
    }
}

/// The custom resources of the namespace the spec names (kind, name); the
/// API ids of those that have one come back to [`apply_body`]. A name that
/// is not a string is left to [`apply_body`] to refuse.
pub fn referenced(view: &ResourceView) -> BTreeSet<(Kind, String)> {
    ref_fields(view.kind)
        .iter()
        .filter_map(|f| Some((f.kind, view.body.get(f.names)?.as_array()?)))
        .flat_map(|(kind, names)| {
            names
                .iter()
                .filter_map(move |n| n.as_str().map(|n| (kind, n.to_string())))
        })
        .collect()
}

/// The body of the PUT: the spec's body with the names of custom resources
/// turned into the API ids of their resources (`alert_contact_refs` into
/// `alert_contact_ids`, `depends_on_refs` into `depends_on`: `PUT
/// .../by-ref` takes the create body, whose references are ids) and the
/// Secret values in their fields. `ids` holds the referenced resources that
/// have an id (see [`referenced`]), `secrets` the Secret keys that exist
/// (see [`secret_keys`]).
pub fn apply_body(
    view: &ResourceView,
    ids: &BTreeMap<(Kind, String), i64>,
    secrets: &BTreeMap<SecretKeyRef, String>,
) -> Result<Value, SpecProblem> {
    let mut body = view.body.clone();
    for field in ref_fields(view.kind) {
        let Some(names) = body.remove(field.names) else {
            continue;
        };
        if body.contains_key(field.ids) {
            return Err(SpecProblem::new(
                "InvalidSpec",
                format!("give {} or {}, not both", field.names, field.ids),
            ));
        }
        let resolved = resolve(field, &names, ids, &view.namespace)?;
        body.insert(field.ids.to_string(), resolved);
    }
    for secret in &view.secret_fields {
        let key = &secret.secret_key_ref;
        let value = secrets.get(key).ok_or_else(|| {
            SpecProblem::new(
                "SecretNotFound",
                format!(
                    "secret_fields {}: key {:?} of Secret {:?} not found in namespace {:?}",
                    secret.field, key.key, key.name, view.namespace
                ),
            )
        })?;
        set_path(&mut body, &secret.field, Value::String(value.clone()))?;
    }
    Ok(Value::Object(body))
}

/// The ids of the resources `names` (a list of custom resource names) stand
/// for, ascending and each once.
fn resolve(
    field: &RefField,
    names: &Value,
    ids: &BTreeMap<(Kind, String), i64>,
    namespace: &str,
) -> Result<Value, SpecProblem> {
    let not_names = || {
        SpecProblem::new(
            "InvalidSpec",
            format!(
                "{} must be a list of {} names",
                field.names,
                field.kind.as_str()
            ),
        )
    };
    let mut found = BTreeSet::new();
    for name in names.as_array().ok_or_else(not_names)? {
        let name = name.as_str().ok_or_else(not_names)?;
        let id = ids.get(&(field.kind, name.to_string())).ok_or_else(|| {
            SpecProblem::new(
                "ReferenceNotReady",
                format!(
                    "{}: {} {name:?} in namespace {namespace:?} does not exist or is not applied yet",
                    field.names,
                    field.kind.as_str()
                ),
            )
        })?;
        found.insert(*id);
    }
    Ok(Value::Array(found.into_iter().map(Value::from).collect()))
}

/// Sets `path` (dotted) in `body`, making the objects on the way.
fn set_path(body: &mut Map<String, Value>, path: &str, value: Value) -> Result<(), SpecProblem> {
    let not_object = |at: &str| {
        SpecProblem::new(
            "InvalidSpec",
            format!("secret_fields {path}: {at} is not an object in the spec"),
        )
    };
    let mut parts = path.split('.').peekable();
    let mut here = body;
    while let Some(part) = parts.next() {
        if part.is_empty() {
            return Err(SpecProblem::new(
                "InvalidSpec",
                format!("secret_fields: {path:?} is not a field path"),
            ));
        }
        if parts.peek().is_none() {
            here.insert(part.to_string(), value);
            return Ok(());
        }
        let next = here
            .entry(part.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        here = next.as_object_mut().ok_or_else(|| not_object(part))?;
    }
    Ok(())
}
