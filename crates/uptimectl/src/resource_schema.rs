//! The JSON Schema of the file format (`docs/schemas/uptime-resources.schema.json`,
//! printed by `uptimectl schema`), so editors validate resource files as
//! they are written.
//!
//! It is generated from the gateway's OpenAPI document ([`generate`]): each
//! kind's `spec` is its create body (the component and every component it
//! refers to, under `$defs`), with the ref form of each field that names
//! other resources by id and `{from_env: VAR}` allowed for each write-only
//! secret; around them the `{kind, ref, spec}` envelope and the three shapes
//! of a document. The committed file is pinned by a test that regenerates
//! it from the gateway's document (`tests/it/resource_schema.rs`), so it
//! cannot drift from the API; `UPTIMECTL_BLESS=1` rewrites it.
//!
//! The same schema checks every resource before `apply` sends anything
//! ([`SpecValidators`]) and tells `export` which response fields a spec
//! holds ([`Defs`]).

use crate::kinds::{Kind, MAX_REF_CHARS, REF_FIELDS, REF_PATTERN, SECRET_FIELDS};
use serde_json::{json, Map, Value};
use std::sync::OnceLock;

/// The committed schema, as built into the binary.
pub const SCHEMA_TEXT: &str = include_str!("../../../docs/schemas/uptime-resources.schema.json");
/// Where it is committed, from the repository's root.
pub const SCHEMA_PATH: &str = "docs/schemas/uptime-resources.schema.json";

const COMPONENTS_PREFIX: &str = "#/components/schemas/";
const DEFS_PREFIX: &str = "#/$defs/";

/// The file format's schema from the gateway's OpenAPI document.
pub fn generate(openapi: &Value) -> Value {
    let components = &openapi["components"]["schemas"];
    let mut defs = Map::new();
    let mut pending: Vec<String> = Kind::ALL
        .iter()
        .map(|k| k.create_schema().to_string())
        .collect();
    while let Some(name) = pending.pop() {
        if defs.contains_key(&name) {
            continue;
        }
        let mut schema = components[&name].clone();
        rewrite_refs(&mut schema, &mut pending);
        defs.insert(name, schema);
    }
    for kind in Kind::ALL {
        if let Some(spec) = defs.get_mut(kind.create_schema()) {
            // The envelope carries the ref; a spec never repeats it.
            remove_property(spec, "ref");
        }
    }
    for field in REF_FIELDS {
        let Some(schema) = defs.get_mut(field.schema) else {
            continue;
        };
        if schema["properties"].get(field.ids).is_none() {
            if !field.apply_only {
                continue;
            }
            let id = json!({"type": "integer", "minimum": 1});
            let by_id = if field.many {
                json!({"type": "array", "items": id})
            } else {
                id
            };
            schema["properties"][field.ids] = by_id;
        }
        let description = format!(
            "`{}` by ref: {} of this file set or already in the organisation. Not together with `{}`.",
            field.ids,
            if field.many { "refs of resources" } else { "the ref of a resource" },
            field.ids
        );
        let by_ref = if field.many {
            json!({"type": "array", "items": {"$ref": "#/$defs/Ref"}, "description": description})
        } else {
            json!({"$ref": "#/$defs/Ref", "description": description})
        };
        schema["properties"][field.refs] = by_ref;
        if remove_required(schema, field.ids) {
            push_all_of(
                schema,
                json!({"anyOf": [{"required": [field.ids]}, {"required": [field.refs]}]}),
            );
        }
        schema
            .as_object_mut()
            .expect("a component is an object")
            .entry("dependentSchemas")
            .or_insert_with(|| json!({}))[field.refs] = json!({"not": {"required": [field.ids]}});
    }
    for secret in SECRET_FIELDS {
        let Some(property) = defs
            .get_mut(secret.schema)
            .and_then(|s| s["properties"].get_mut(secret.property))
        else {
            continue;
        };
        let given = property.take();
        *property = json!({"anyOf": [given, {"$ref": "#/$defs/FromEnv"}]});
    }
    defs.insert(
        "Ref".into(),
        json!({
            "type": "string", "minLength": 1, "maxLength": MAX_REF_CHARS, "pattern": REF_PATTERN,
            "description": "Names the resource: unique per organisation and kind, never changed once set.",
        }),
    );
    defs.insert(
        "FromEnv".into(),
        json!({
            "type": "object", "required": ["from_env"], "additionalProperties": false,
            "properties": {"from_env": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$",
                "description": "The environment variable that holds the secret, read by uptimectl before sending."}},
        }),
    );
    let mut kinds = Vec::new();
    for kind in Kind::ALL {
        let name = format!("{}Resource", kind.name());
        defs.insert(
            name.clone(),
            json!({
                "type": "object", "required": ["kind", "ref", "spec"], "additionalProperties": false,
                "properties": {
                    "kind": {"const": kind.name()},
                    "ref": {"$ref": "#/$defs/Ref"},
                    "spec": {"$ref": format!("{DEFS_PREFIX}{}", kind.create_schema())},
                },
            }),
        );
        kinds.push(json!({"$ref": format!("{DEFS_PREFIX}{name}")}));
    }
    defs.insert("Resource".into(), json!({"oneOf": kinds}));
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Uptime resources",
        "description": "A file of `uptimectl apply`: one resource {kind, ref, spec}, a list of them, or {resources: [...]}. Generated from the API's OpenAPI document; see docs/api.md, \"The command line\".",
        "anyOf": [
            {"$ref": "#/$defs/Resource"},
            {"type": "array", "items": {"$ref": "#/$defs/Resource"}},
            {"type": "object", "required": ["resources"], "additionalProperties": false,
             "properties": {"resources": {"type": "array", "items": {"$ref": "#/$defs/Resource"}}}},
        ],
        "$defs": defs,
    })
}

/// The schema as committed: pretty JSON and a final newline.
pub fn to_text(schema: &Value) -> String {
    let mut text = serde_json::to_string_pretty(schema).expect("a JSON value");
    text.push('\n');
    text
}

/// `#/components/schemas/X` → `#/$defs/X`, collecting each X.
fn rewrite_refs(schema: &mut Value, found: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                match value {
                    Value::String(target) if key == "$ref" => {
                        if let Some(name) = target.strip_prefix(COMPONENTS_PREFIX) {
                            found.push(name.to_string());
                            *target = format!("{DEFS_PREFIX}{name}");
                        }
                    }
                    other => rewrite_refs(other, found),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| rewrite_refs(i, found)),
        _ => {}
    }
}

fn remove_property(schema: &mut Value, name: &str) {
    if let Some(properties) = schema["properties"].as_object_mut() {
        properties.remove(name);
    }
    remove_required(schema, name);
}

/// Whether `name` was required (it is no longer).
fn remove_required(schema: &mut Value, name: &str) -> bool {
    let Some(required) = schema.get_mut("required").and_then(Value::as_array_mut) else {
        return false;
    };
    let before = required.len();
    required.retain(|r| r != name);
    before != required.len()
}

fn push_all_of(schema: &mut Value, condition: Value) {
    if let Some(map) = schema.as_object_mut() {
        let all_of = map.entry("allOf").or_insert_with(|| json!([]));
        if let Some(list) = all_of.as_array_mut() {
            list.push(condition);
        }
    }
}

/// The committed schema's `$defs`, parsed once.
pub struct Defs {
    defs: Map<String, Value>,
}

impl Defs {
    pub fn get() -> &'static Defs {
        static DEFS: OnceLock<Defs> = OnceLock::new();
        DEFS.get_or_init(|| {
            let schema: Value = serde_json::from_str(SCHEMA_TEXT).unwrap_or(Value::Null);
            let defs = schema["$defs"].as_object().cloned().unwrap_or_default();
            Defs { defs }
        })
    }

    pub fn all(&self) -> &Map<String, Value> {
        &self.defs
    }

    /// The spec schema of a kind.
    pub fn spec(&self, kind: Kind) -> Option<&Value> {
        self.defs.get(kind.create_schema())
    }

    /// What a schema node stands for once `$ref`s and combinators
    /// (`anyOf`, `oneOf`, `allOf`) are looked through: every object
    /// properties' schema it declares, and its array items' schema.
    pub fn shape<'a>(&'a self, node: &'a Value) -> Shape<'a> {
        let mut shape = Shape::default();
        self.gather(node, &mut shape, 0);
        shape
    }

    fn gather<'a>(&'a self, node: &'a Value, shape: &mut Shape<'a>, depth: usize) {
        // Deep enough for any component nesting; stops a self-reference.
        if depth > 16 {
            return;
        }
        if let Some(target) = node["$ref"]
            .as_str()
            .and_then(|r| r.strip_prefix(DEFS_PREFIX))
        {
            if let Some(def) = self.defs.get(target) {
                self.gather(def, shape, depth + 1);
            }
        }
        if let Some(properties) = node["properties"].as_object() {
            shape.has_properties = true;
            for (name, schema) in properties {
                shape.properties.entry(name.as_str()).or_insert(schema);
            }
        }
        if shape.items.is_none() && node.get("items").is_some_and(Value::is_object) {
            shape.items = node.get("items");
        }
        for combinator in ["anyOf", "oneOf", "allOf"] {
            for member in node[combinator].as_array().into_iter().flatten() {
                self.gather(member, shape, depth + 1);
            }
        }
    }
}

/// See [`Defs::shape`].
#[derive(Default)]
pub struct Shape<'a> {
    /// Whether any part declares `properties` (else an object is a free
    /// map, like labels).
    pub has_properties: bool,
    pub properties: std::collections::BTreeMap<&'a str, &'a Value>,
    pub items: Option<&'a Value>,
}

/// A compiled validator of each kind's spec, from the committed schema.
pub struct SpecValidators {
    by_kind: Vec<(Kind, jsonschema::Validator)>,
}

impl SpecValidators {
    pub fn get() -> &'static SpecValidators {
        static VALIDATORS: OnceLock<SpecValidators> = OnceLock::new();
        VALIDATORS.get_or_init(|| {
            let defs = Defs::get();
            let mut by_kind = Vec::new();
            for kind in Kind::ALL {
                if defs.spec(kind).is_none() {
                    continue;
                }
                let schema = json!({
                    "$schema": "https://json-schema.org/draft/2020-12/schema",
                    "$ref": format!("{DEFS_PREFIX}{}", kind.create_schema()),
                    "$defs": defs.all(),
                });
                // The committed schema is compiled by its pinning test, so
                // a failure here is a broken build; it then checks nothing
                // and the server's validation still holds.
                if let Ok(validator) = jsonschema::validator_for(&schema) {
                    by_kind.push((kind, validator));
                }
            }
            SpecValidators { by_kind }
        })
    }

    /// What is wrong with a spec of `kind`: (field, message) pairs, the
    /// field as `spec.headers[0].name`.
    pub fn errors(&self, kind: Kind, spec: &Value) -> Vec<(String, String)> {
        let Some((_, validator)) = self.by_kind.iter().find(|(k, _)| *k == kind) else {
            return Vec::new();
        };
        validator
            .iter_errors(spec)
            .map(|error| {
                let mut segments = vec!["spec".to_string()];
                for segment in error.instance_path.as_str().split('/').skip(1) {
                    let segment = segment.replace("~1", "/").replace("~0", "~");
                    if !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit()) {
                        segments.push(format!("[{segment}]"));
                    } else {
                        segments.push(segment);
                    }
                }
                (field_path(&segments), error.to_string())
            })
            .collect()
    }
}

/// `spec.headers[0].name` from its segments: how every message of the
/// file format names a field (a schema error, a missing variable).
pub fn field_path(segments: &[String]) -> String {
    let mut out = String::new();
    for segment in segments {
        if !out.is_empty() && !segment.starts_with('[') {
            out.push('.');
        }
        out.push_str(segment);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A miniature OpenAPI document with the shapes the real one has.
    fn openapi() -> Value {
        let object = |props: Value, required: Value| json!({"type": "object", "properties": props, "required": required, "additionalProperties": false});
        json!({"components": {"schemas": {
            "CreateMonitor": object(json!({
                "name": {"type": "string"}, "ref": {"type": "string"},
                "alert_contact_ids": {"type": "array", "items": {"type": "integer"}},
                "basic_auth": {"$ref": "#/components/schemas/BasicAuthInput"}}), json!(["name"])),
            "BasicAuthInput": object(json!({"username": {"type": "string"}, "password": {"type": "string"}}), json!(["username"])),
            "CreateContact": object(json!({"name": {"type": "string"}, "secret": {"type": "string"}}), json!(["name"])),
            "CreateWindow": object(json!({"name": {"type": "string"}, "monitor_ids": {"type": "array", "items": {"type": "integer"}}}), json!(["name", "monitor_ids"])),
            "CreatePolicy": object(json!({"steps": {"type": "array", "items": {"$ref": "#/components/schemas/StepBody"}}}), json!(["steps"])),
            "StepBody": object(json!({"contact_ids": {"type": "array", "items": {"type": "integer"}}}), json!(["contact_ids"])),
            "CreateStatusPage": object(json!({"slug": {"type": "string"}}), json!(["slug"])),
            "Unrelated": {"type": "object"},
        }}})
    }

    #[test]
    fn specs_are_the_create_bodies_with_refs_and_secrets_from_the_environment() {
        let schema = generate(&openapi());
        let defs = &schema["$defs"];
        assert!(defs.get("Unrelated").is_none(), "only what the specs use");
        assert!(defs["CreateMonitor"]["properties"].get("ref").is_none());
        assert_eq!(
            defs["CreateMonitor"]["properties"]["basic_auth"]["$ref"],
            "#/$defs/BasicAuthInput"
        );
        assert_eq!(
            defs["CreateMonitor"]["properties"]["alert_contact_refs"]["items"]["$ref"],
            "#/$defs/Ref"
        );
        // A required id list may be given by ref instead.
        assert_eq!(defs["CreateWindow"]["required"], json!(["name"]));
        assert!(defs["StepBody"]["properties"].get("contact_refs").is_some());
        // Not in the create body, but in the apply's spec.
        assert_eq!(
            defs["CreateMonitor"]["properties"]["escalation_policy_ref"]["$ref"],
            "#/$defs/Ref"
        );
        assert_eq!(
            defs["CreateMonitor"]["properties"]["escalation_policy_id"]["type"],
            "integer"
        );
        let validator = jsonschema::validator_for(&schema).expect("a valid schema");
        let file = json!({"resources": [
            {"kind": "Monitor", "ref": "api", "spec": {"name": "api",
                "basic_auth": {"username": "u", "password": {"from_env": "PW"}}}},
            {"kind": "MaintenanceWindow", "ref": "w", "spec": {"name": "w", "monitor_refs": ["api"]}},
            {"kind": "AlertContact", "ref": "c", "spec": {"name": "c", "secret": {"from_env": "S"}}},
        ]});
        let errors: Vec<String> = validator
            .iter_errors(&file)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{errors:?}");
        for bad in [
            json!({"kind": "Monitor", "ref": "Bad Ref", "spec": {"name": "x"}}),
            json!({"kind": "Monitor", "ref": "a", "spec": {"name": "x", "alert_contact_ids": [1], "alert_contact_refs": ["c"]}}),
            json!({"kind": "MaintenanceWindow", "ref": "w", "spec": {"name": "w"}}),
            json!({"kind": "Monitor", "ref": "a", "spec": {"name": {"from_env": "X"}}}),
            json!({"kind": "Gadget", "ref": "a", "spec": {}}),
        ] {
            assert!(!validator.is_valid(&bad), "{bad}");
        }
    }
}
