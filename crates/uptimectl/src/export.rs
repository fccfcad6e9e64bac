//! `uptimectl export`: every resource of the organisation as files that
//! `apply` reproduces exactly.
//!
//! One file per kind (`monitors.yaml`, `alert-contacts.yaml`, ...), one
//! YAML document per resource, sorted by ref; a kind without resources
//! has no file. A resource's spec is its response cut to the fields of its
//! create body (the file format's schema says which), written in the form
//! the API shows, defaults included, so that applying it and exporting
//! again gives the same bytes:
//! - references to other resources by ref (`alert_contact_refs`, ...;
//!   a monitor's escalation policy, read from its own route, as
//!   `escalation_policy_ref`);
//! - resources without a ref get `<kind-lowercase>-<id>` (which an apply
//!   then sets);
//! - `null`s and empty strings (what the API shows for "not set") left
//!   out;
//! - write-only secrets that are set as
//!   `{from_env: UPTIME_SECRET_<KIND>_<REF>_<FIELD>}`.

use crate::client::{Client, ClientError, MAX_LIST_ITEMS};
use crate::kinds::{secret_env_var, Kind, REF_FIELDS, SECRET_FIELDS};
use crate::resource_schema::Defs;
use futures::{StreamExt, TryStreamExt};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::path::Path;

/// The resources of one kind, as exported.
#[derive(Debug, Clone, PartialEq)]
pub struct Exported {
    pub kind: Kind,
    /// `{kind, ref, spec}` each, sorted by ref.
    pub resources: Vec<Value>,
}

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Api(#[from] ClientError),
    #[error("writing {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
}

/// Reads every kind through its list (all pages).
pub async fn fetch(client: &Client) -> Result<Vec<Exported>, ClientError> {
    let mut listed = Vec::new();
    for kind in Kind::ALL {
        let path = format!("/api/v1/{}", kind.collection());
        let items = client
            .list(&path, kind.list_field(), MAX_LIST_ITEMS)
            .await?;
        listed.push((kind, items));
    }
    attach_escalation_policies(client, &mut listed).await?;
    Ok(convert(&listed))
}

/// Monitors' escalation policies read at once.
const POLICY_READS_IN_FLIGHT: usize = 8;

/// A monitor's escalation policy is its own resource (`GET
/// /api/v1/monitors/{id}/escalation-policy`), not a field of the monitor's
/// response: read for every monitor, as `escalation_policy_id`, when the
/// organisation has policies at all (an organisation without any pays
/// nothing), and only when the monitor's response does not show it.
async fn attach_escalation_policies(
    client: &Client,
    listed: &mut [(Kind, Vec<Value>)],
) -> Result<(), ClientError> {
    let has_policies = listed
        .iter()
        .any(|(kind, items)| *kind == Kind::EscalationPolicy && !items.is_empty());
    if !has_policies {
        return Ok(());
    }
    let Some((_, monitors)) = listed.iter_mut().find(|(kind, _)| *kind == Kind::Monitor) else {
        return Ok(());
    };
    let unknown: Vec<(usize, i64)> = monitors
        .iter()
        .enumerate()
        .filter(|(_, m)| m.get("escalation_policy_id").is_none())
        .filter_map(|(i, m)| Some((i, m["id"].as_i64()?)))
        .collect();
    let read: Vec<(usize, Value)> = futures::stream::iter(unknown)
        .map(|(index, id)| async move {
            let path = format!("/api/v1/monitors/{id}/escalation-policy");
            let answer = client.get(&path).await?;
            Ok::<_, ClientError>((index, answer["escalation_policy_id"].clone()))
        })
        .buffer_unordered(POLICY_READS_IN_FLIGHT)
        .try_collect()
        .await?;
    for (index, policy) in read {
        if let Some(map) = monitors[index].as_object_mut() {
            map.insert("escalation_policy_id".into(), policy);
        }
    }
    Ok(())
}

/// The listed responses of each kind as resources.
pub fn convert(listed: &[(Kind, Vec<Value>)]) -> Vec<Exported> {
    let refs: HashMap<(Kind, i64), String> = listed
        .iter()
        .flat_map(|(kind, items)| {
            items.iter().filter_map(move |item| {
                let id = item["id"].as_i64()?;
                Some(((*kind, id), reference_of(*kind, item)))
            })
        })
        .collect();
    listed
        .iter()
        .map(|(kind, items)| {
            let mut resources: Vec<Value> = items
                .iter()
                .map(|item| {
                    let reference = reference_of(*kind, item);
                    let spec = spec_of(*kind, &reference, item, &refs);
                    json!({"kind": kind.name(), "ref": reference, "spec": spec})
                })
                .collect();
            resources.sort_by(|a, b| a["ref"].as_str().cmp(&b["ref"].as_str()));
            Exported {
                kind: *kind,
                resources,
            }
        })
        .collect()
}

fn reference_of(kind: Kind, item: &Value) -> String {
    match item["ref"].as_str() {
        Some(reference) => reference.to_string(),
        None => kind.default_ref(item["id"].as_i64().unwrap_or_default()),
    }
}

/// Fields a response shows that a create body refuses beside another:
/// (kind, the field given, the field it implies, left out). A heartbeat
/// on a `schedule` shows the `interval_secs` it stands for.
const IMPLIED_FIELDS: &[(Kind, &str, &str)] = &[(Kind::Monitor, "schedule", "interval_secs")];

/// One response as the spec that recreates it.
pub fn spec_of(
    kind: Kind,
    reference: &str,
    item: &Value,
    refs: &HashMap<(Kind, i64), String>,
) -> Value {
    let mut response = item.clone();
    let secrets: Vec<_> = SECRET_FIELDS.iter().filter(|s| s.kind == kind).collect();
    for secret in &secrets {
        // A response's secret field says whether one is stored (`"set"`),
        // or is redacted (a contact's `value` beside `value_redacted`),
        // which is not a value to send back. A field the response shows
        // with no such flag (an email contact's `value`) is kept.
        if value_at(item, secret.stored_flag).is_some() {
            remove_at(&mut response, secret.path);
        }
    }
    let defs = Defs::get();
    let mut spec = match defs.spec(kind) {
        Some(schema) => project(defs, schema, &response),
        None => response,
    };
    drop_unset(&mut spec);
    for (rule_kind, given, implied) in IMPLIED_FIELDS {
        if *rule_kind == kind && spec.get(given).is_some() {
            if let Some(map) = spec.as_object_mut() {
                map.remove(*implied);
            }
        }
    }
    for field in REF_FIELDS.iter().filter(|f| f.kind == kind) {
        match field.within {
            None => to_refs(&mut spec, field, refs),
            Some(array) => {
                for inner in spec[array].as_array_mut().into_iter().flatten() {
                    to_refs(inner, field, refs);
                }
            }
        }
    }
    if let Some(map) = spec.as_object_mut() {
        // A monitor alerts through a policy or its contacts, never both:
        // with a policy its (empty) contacts are not restated.
        if map.contains_key("escalation_policy_ref")
            && map.get("alert_contact_refs") == Some(&json!([]))
        {
            map.remove("alert_contact_refs");
        }
    }
    for secret in secrets {
        let stored = value_at(item, secret.stored_flag).is_some_and(secret.stored_value);
        if stored {
            let var = secret_env_var(kind, reference, &secret.path.join("_"));
            set_at(&mut spec, secret.path, json!({"from_env": var}));
        }
    }
    spec
}

/// `value` cut to what `schema` declares, recursively; objects the schema
/// declares no properties of (labels, selectors) are kept whole.
fn project(defs: &Defs, schema: &Value, value: &Value) -> Value {
    let shape = defs.shape(schema);
    match value {
        Value::Object(map) if shape.has_properties => {
            let mut kept = Map::new();
            for (name, inner) in map {
                if let Some(inner_schema) = shape.properties.get(name.as_str()) {
                    kept.insert(name.clone(), project(defs, inner_schema, inner));
                }
            }
            Value::Object(kept)
        }
        Value::Array(items) => match shape.items {
            Some(item_schema) => Value::Array(
                items
                    .iter()
                    .map(|i| project(defs, item_schema, i))
                    .collect(),
            ),
            None => value.clone(),
        },
        other => other.clone(),
    }
}

/// Leaves out `null`s and empty strings of objects: the API's "not set",
/// which a create body says by leaving the field out.
fn drop_unset(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, v| !(v.is_null() || v.as_str() == Some("")));
            map.values_mut().for_each(drop_unset);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_unset),
        _ => {}
    }
}

/// `ids` → `refs` in `object`, when every id is a known resource's (else
/// the ids stay: the apply then names what is wrong).
fn to_refs(
    object: &mut Value,
    field: &crate::kinds::RefField,
    refs: &HashMap<(Kind, i64), String>,
) {
    let Some(map) = object.as_object_mut() else {
        return;
    };
    let Some(ids) = map.get(field.ids) else {
        return;
    };
    let lookup = |id: &Value| {
        id.as_i64()
            .and_then(|id| refs.get(&(field.target, id)))
            .map(|r| Value::String(r.clone()))
    };
    let by_ref = match ids {
        Value::Array(ids) => ids
            .iter()
            .map(lookup)
            .collect::<Option<Vec<_>>>()
            .map(|mut refs| {
                if !field.ordered {
                    refs.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
                }
                Value::Array(refs)
            }),
        one => lookup(one),
    };
    if let Some(by_ref) = by_ref {
        map.remove(field.ids);
        map.insert(field.refs.to_string(), by_ref);
    }
}

fn value_at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(value, |v, key| v.get(key))
}

fn remove_at(value: &mut Value, path: &[&str]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let parent = parents.iter().try_fold(value, |v, key| v.get_mut(key));
    if let Some(Value::Object(map)) = parent {
        map.remove(*last);
    }
}

fn set_at(value: &mut Value, path: &[&str], new: Value) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut target = value;
    for key in parents {
        if !target.get(key).is_some_and(Value::is_object) {
            target[*key] = json!({});
        }
        target = &mut target[*key];
    }
    target[*last] = new;
}

/// One kind's file: a header, then a YAML document per resource.
pub fn render(exported: &Exported) -> String {
    let mut out = format!(
        "# {} of the organisation, written by `uptimectl export`; `uptimectl apply -f` reproduces them.\n",
        exported.kind.name()
    );
    for resource in &exported.resources {
        out.push_str("---\n");
        out.push_str(&serde_norway::to_string(resource).unwrap_or_default());
    }
    out
}

/// Every kind's file into `dir` (created if needed); a kind without
/// resources has its file removed, so the directory holds exactly the
/// organisation. Returns the files written.
pub fn write_dir(dir: &Path, exported: &[Exported]) -> Result<Vec<String>, ExportError> {
    let failed = |path: &Path| {
        let path = path.display().to_string();
        move |source| ExportError::Write { path, source }
    };
    std::fs::create_dir_all(dir).map_err(failed(dir))?;
    let mut written = Vec::new();
    for kind_set in exported {
        let path = dir.join(kind_set.kind.file_name());
        if kind_set.resources.is_empty() {
            match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(failed(&path)(e)),
                _ => continue,
            }
        }
        std::fs::write(&path, render(kind_set)).map_err(failed(&path))?;
        written.push(path.display().to_string());
    }
    Ok(written)
}

/// Everything as one stream (for stdout): each kind's documents in turn.
pub fn render_all(exported: &[Exported]) -> String {
    exported
        .iter()
        .filter(|e| !e.resources.is_empty())
        .map(render)
        .collect()
}

#[cfg(test)]
#[path = "export_tests.rs"]
mod tests;
