//! The custom resources the operator reconciles: `Monitor` and
//! `AlertContact` in the API group `uptime.dev`, version `v1alpha1`.
//!
//! A resource's `spec` is the apply spec of its kind: the body of the REST
//! create (`POST /api/v1/monitors`, `POST /api/v1/alert-contacts`) as is,
//! with two differences (see /work/APPLY-CONTRACT.md and docs/operations.md):
//! - other resources are named by the names of their custom resources in
//!   the same namespace (`alert_contact_refs`, `depends_on_refs`, the
//!   apply's ref form), which the operator turns into the ids their status
//!   holds (`alert_contact_ids`, `depends_on`: the body `PUT .../by-ref`
//!   takes);
//! - write-only secrets are not written in the resource: `secret_fields`
//!   names, per body field, the key of a Kubernetes Secret that holds it.
//!
//! The schema lists the fields every kind has and keeps the rest
//! (`x-kubernetes-preserve-unknown-fields`): the API validates the body and
//! its answer lands in the `Ready` condition, so the CRD does not repeat
//! (and drift from) the API's rules.

use chrono::{DateTime, Utc};
use kube::CustomResource;
use schemars::gen::SchemaGenerator;
use schemars::schema::Schema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

/// The API group of both kinds.
pub const GROUP: &str = "uptime.dev";
/// Their one version, `v1alpha1`: the spec follows the REST body, which
/// may still grow.
pub const VERSION: &str = "v1alpha1";

/// A monitor of the uptime service, kept equal to its spec.
#[derive(CustomResource, Debug, Clone, Serialize, Deserialize, PartialEq)]
#[kube(
    group = "uptime.dev",
    version = "v1alpha1",
    kind = "Monitor",
    namespaced,
    status = "ResourceStatus",
    shortname = "upmon",
    category = "uptime",
    derive = "PartialEq",
    annotation("helm.sh/resource-policy", "keep"),
    doc = "A monitor of the uptime service. The spec is the body of POST /api/v1/monitors (alert_contact_refs name AlertContact resources of this namespace, secret_fields Secret keys); the operator applies it with PUT /api/v1/monitors/by-ref/<namespace>.<name> and writes the monitor's state to status.",
    printcolumn = r#"{"name":"State","type":"string","jsonPath":".status.state"}"#,
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"}"#,
    printcolumn = r#"{"name":"Id","type":"integer","jsonPath":".status.id"}"#,
    printcolumn = r#"{"name":"Last check","type":"date","jsonPath":".status.lastCheckedAt"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
pub struct MonitorSpec {
    /// The REST create body's fields (`name`, `type`, `target`,
    /// `interval_secs`, ..., `alert_contact_refs`, `depends_on_refs`).
    #[serde(flatten)]
    pub body: Map<String, Value>,
    /// Body fields whose values come from Secrets.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secret_fields: Vec<SecretField>,
}

/// An alert contact of the uptime service, kept equal to its spec.
#[derive(CustomResource, Debug, Clone, Serialize, Deserialize, PartialEq)]
#[kube(
    group = "uptime.dev",
    version = "v1alpha1",
    kind = "AlertContact",
    namespaced,
    status = "ResourceStatus",
    shortname = "upcontact",
    category = "uptime",
    derive = "PartialEq",
    annotation("helm.sh/resource-policy", "keep"),
    doc = "An alert contact of the uptime service. The spec is the body of POST /api/v1/alert-contacts (its credential through secret_fields); the operator applies it with PUT /api/v1/alert-contacts/by-ref/<namespace>.<name>.",
    printcolumn = r#"{"name":"Type","type":"string","jsonPath":".spec.type"}"#,
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"}"#,
    printcolumn = r#"{"name":"Id","type":"integer","jsonPath":".status.id"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
pub struct AlertContactSpec {
    /// The REST create body's fields (`name`, `type`, `value`, ...).
    #[serde(flatten)]
    pub body: Map<String, Value>,
    /// Body fields whose values come from Secrets (a provider's `secret`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secret_fields: Vec<SecretField>,
}

/// One body field filled from a Secret of the resource's namespace.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct SecretField {
    /// The body field, dotted when nested: `secret`, `basic_auth.password`.
    pub field: String,
    #[serde(rename = "secretKeyRef")]
    pub secret_key_ref: SecretKeyRef,
}

/// A key of a Secret in the resource's namespace (Kubernetes' own shape).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SecretKeyRef {
    pub name: String,
    pub key: String,
}

/// What the operator writes back; the same shape for both kinds (`state`,
/// `lastCheckedAt` and `openIncidentId` are a monitor's only).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceStatus {
    /// The `metadata.generation` the rest of the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// The resource's id in the API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<i64>,
    /// The resource's ref in the API: `<namespace>.<name>`.
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    pub api_ref: Option<String>,
    /// The monitor's state: `pending`, `up`, `degraded`, `down`, or
    /// `paused` while inactive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// When the monitor was last checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_checked_at: Option<DateTime<Utc>>,
    /// The id of the monitor's incident while one is open (or acknowledged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_incident_id: Option<String>,
    /// When the spec was last applied successfully (it is applied again
    /// after `operator.reapply_secs`, which picks up changed Secrets and
    /// undoes edits made through the API).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_applied_at: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

/// A status condition, as Kubernetes' `metav1.Condition`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// `Ready`.
    #[serde(rename = "type")]
    pub kind: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// CamelCase: `Applied`, `Refused`, `ApiUnreachable`, `SecretNotFound`,
    /// `ReferenceNotReady`, `InvalidSpec`, `InvalidName`, `DeleteRefused`.
    pub reason: String,
    /// The API's error message when the apply was refused.
    pub message: String,
    pub last_transition_time: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

fn secret_fields_schema() -> Value {
    json!({
        "type": "array",
        "description": "Body fields whose values come from Secrets of this namespace (write-only fields: a contact's secret, basic_auth.password, ...); never write them in the spec.",
        "items": {
            "type": "object",
            "required": ["field", "secretKeyRef"],
            "properties": {
                "field": {
                    "type": "string",
                    "minLength": 1,
                    "description": "The body field the value fills, dotted when nested: secret, basic_auth.password."
                },
                "secretKeyRef": {
                    "type": "object",
                    "required": ["name", "key"],
                    "properties": {
                        "name": {"type": "string", "minLength": 1, "description": "The Secret's name."},
                        "key": {"type": "string", "minLength": 1, "description": "The key in the Secret's data."}
                    }
                }
            }
        }
    })
}

fn names_schema(description: &str) -> Value {
    json!({"type": "array", "description": description, "items": {"type": "string", "minLength": 1}})
}

/// An object of the listed properties that keeps every other field (the
/// rest of the REST body).
fn body_schema(description: &str, mut properties: Map<String, Value>) -> Schema {
    properties.insert("secret_fields".into(), secret_fields_schema());
    let schema = json!({
        "type": "object",
        "description": description,
        "required": ["name", "type"],
        "properties": properties,
        "x-kubernetes-preserve-unknown-fields": true
    });
    serde_json::from_value(schema).expect("a JSON Schema literal")
}

impl JsonSchema for MonitorSpec {
    fn schema_name() -> String {
        "MonitorSpec".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let properties = json!({
            "name": {"type": "string", "description": "1 to 200 characters."},
            "type": {"type": "string", "description": "http, keyword, tcp, ping, dns, tls, heartbeat, ... (the API's monitor types)."},
            "target": {"type": "string", "description": "What is checked (a URL, host:port, ...); every type but heartbeat."},
            "interval_secs": {"type": "integer", "description": "Seconds between checks (the API's bounds apply)."},
            "alert_contact_refs": names_schema("Names of AlertContact resources in this namespace to alert."),
            "depends_on_refs": names_schema("Names of Monitor resources in this namespace this monitor depends on."),
            "labels": {"type": "object", "additionalProperties": {"type": "string"}}
        });
        let Value::Object(properties) = properties else {
            unreachable!("an object literal")
        };
        body_schema(
            "The body of POST /api/v1/monitors (see the API reference); fields not listed here are passed as they are and validated by the API.",
            properties,
        )
    }
}

impl JsonSchema for AlertContactSpec {
    fn schema_name() -> String {
        "AlertContactSpec".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let properties = json!({
            "name": {"type": "string", "description": "1 to 200 characters."},
            "type": {"type": "string", "description": "email, slack, webhook, pagerduty, opsgenie, ... (the API's contact types)."},
            "value": {"type": "string", "description": "The address, URL, chat id, topic or user key of the type."}
        });
        let Value::Object(properties) = properties else {
            unreachable!("an object literal")
        };
        body_schema(
            "The body of POST /api/v1/alert-contacts (see the API reference); fields not listed here are passed as they are and validated by the API.",
            properties,
        )
    }
}
