//! The JSON Schemas of every live message version, built into the binary
//! from `proto-schemas/` (so a tap validates exactly what this release's
//! contracts publish), and which one a subject's messages follow.

use include_dir::{include_dir, Dir};
use std::collections::BTreeMap;
use uptime_contracts::versions::{WireVersion, VERSIONS};

static PROTO_SCHEMAS: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../../proto-schemas");

/// The prefix under which dead letters keep their original subject.
pub const DEAD_PREFIX: &str = "uptime.dead.";

#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    #[error("proto-schemas/{file} is missing from the build")]
    Missing { file: String },
    #[error("proto-schemas/{file} is not a valid JSON Schema: {reason}")]
    Invalid { file: String, reason: String },
}

/// One live version's compiled schema.
pub struct Schema {
    /// `check-due.v5`.
    pub name: String,
    validator: jsonschema::Validator,
}

impl Schema {
    /// What is wrong with `payload`, one line per error (empty: valid).
    pub fn errors(&self, payload: &serde_json::Value) -> Vec<String> {
        self.validator
            .iter_errors(payload)
            .map(|e| format!("{}: {e}", e.instance_path))
            .collect()
    }
}

/// Every live version's schema, by the version's subject.
pub struct Schemas {
    by_subject: BTreeMap<&'static str, Schema>,
}

impl Schemas {
    /// Compiles the schema of every live version in the contracts' version
    /// table; a live version without its file is an error (the contracts
    /// test already forbids it, so this only fails on a broken build).
    pub fn load() -> Result<Self, SchemaError> {
        let mut by_subject = BTreeMap::new();
        for version in VERSIONS.iter().filter(|v| v.status.is_live()) {
            by_subject.insert(version.subject, compile(version)?);
        }
        Ok(Self { by_subject })
    }

    /// The schema of the version a message on `subject` follows: the
    /// version whose subject it is, or whose subject it extends (the due
    /// checks' `.<region>` suffix). A dead letter follows its original
    /// subject's. `None`: not one of ours (presence keys, replies).
    pub fn for_subject(&self, subject: &str) -> Option<&Schema> {
        let subject = subject.strip_prefix(DEAD_PREFIX).unwrap_or(subject);
        self.by_subject
            .iter()
            .find(|(prefix, _)| {
                subject == **prefix
                    || subject
                        .strip_prefix(**prefix)
                        .is_some_and(|rest| rest.starts_with('.'))
            })
            .map(|(_, schema)| schema)
    }
}

fn compile(version: &WireVersion) -> Result<Schema, SchemaError> {
    let file = format!("{}.json", version.schema_name());
    let text = PROTO_SCHEMAS
        .get_file(&file)
        .and_then(|f| f.contents_utf8())
        .ok_or_else(|| SchemaError::Missing { file: file.clone() })?;
    let json: serde_json::Value = serde_json::from_str(text).map_err(|e| SchemaError::Invalid {
        file: file.clone(),
        reason: e.to_string(),
    })?;
    let validator = jsonschema::validator_for(&json).map_err(|e| SchemaError::Invalid {
        file: file.clone(),
        reason: e.to_string(),
    })?;
    Ok(Schema {
        name: version.schema_name(),
        validator,
    })
}
