//! How an apply's problems become its refusal: the resource errors of a
//! malformed envelope, a repeated (kind, ref), or a write refused for one
//! resource (`errors` naming index, kind, ref and field).

use crate::apply::plan::{self, Key};
use crate::apply::request::{Kind, ResourceError, ResourceInput};
use crate::error::ApiError;

/// Why an apply's transaction ends without committing.
pub(super) enum Failure {
    Api(ApiError),
    Invalid(Vec<ResourceError>),
    /// A dry run that went through: rolled back, answering its plan.
    DryRun(Vec<crate::apply::request::PlanEntry>),
}

impl From<ApiError> for Failure {
    fn from(e: ApiError) -> Self {
        Failure::Api(e)
    }
}

impl From<diesel::result::Error> for Failure {
    fn from(e: diesel::result::Error) -> Self {
        Failure::Api(e.into())
    }
}

impl From<uptime_db::DbError> for Failure {
    fn from(e: uptime_db::DbError) -> Self {
        Failure::Api(e.into())
    }
}

/// The problems of resource `index` in `error` (a 400's fields, or a 409
/// on its ref), or `None` for an error that is not about the resource.
pub(super) fn resource_errors(
    index: usize,
    key: &Key,
    error: &ApiError,
) -> Option<Vec<ResourceError>> {
    let entry = |field: &str, message: &str| ResourceError {
        index,
        kind: Some(key.0),
        r#ref: Some(key.1.clone()),
        field: if field == "ref" || field.starts_with("spec") {
            field.to_string()
        } else {
            format!("spec.{field}")
        },
        message: message.to_string(),
    };
    match error {
        ApiError::InvalidBody(details) => Some(
            details
                .iter()
                .map(|d| entry(&d.field, &d.message))
                .collect(),
        ),
        ApiError::ConflictOn { field, message } => Some(vec![entry(field, message)]),
        _ => None,
    }
}

/// Reads each resource's envelope (`kind`, `ref`, `spec`), collecting
/// problems; and the repeats of a (kind, ref).
pub(super) fn envelopes(
    resources: Vec<serde_json::Value>,
) -> (Vec<(usize, ResourceInput)>, Vec<ResourceError>) {
    let mut read = Vec::with_capacity(resources.len());
    let mut errors = Vec::new();
    for (index, value) in resources.into_iter().enumerate() {
        let kind: Option<Kind> = value
            .get("kind")
            .and_then(|k| serde_json::from_value(k.clone()).ok());
        let r#ref = value
            .get("ref")
            .and_then(|r| r.as_str())
            .map(str::to_string);
        match serde_json::from_value::<ResourceInput>(value) {
            Ok(input) if crate::refs::is_valid(&input.r#ref) => read.push((index, input)),
            Ok(_) => errors.push(ResourceError {
                index,
                kind,
                r#ref,
                field: "ref".into(),
                message: crate::refs::SYNTAX_MESSAGE.into(),
            }),
            Err(e) => errors.push(ResourceError {
                index,
                kind,
                r#ref,
                field: "resource".into(),
                message: e.to_string(),
            }),
        }
    }
    let keys: Vec<Key> = read
        .iter()
        .map(|(_, r)| (r.kind, r.r#ref.clone()))
        .collect();
    for position in plan::duplicates(&keys) {
        let (index, input) = &read[position];
        errors.push(ResourceError {
            index: *index,
            kind: Some(input.kind),
            r#ref: Some(input.r#ref.clone()),
            field: "ref".into(),
            message: "the set names this kind and ref more than once".into(),
        });
    }
    errors.sort_by_key(|e| e.index);
    (read, errors)
}

/// The failure of resource `position`: its problems (400), or the error.
pub(super) fn failure_at(
    inputs: &[(usize, ResourceInput)],
    keys: &[Key],
    position: usize,
    e: ApiError,
) -> Failure {
    let (index, _) = &inputs[position];
    match resource_errors(*index, &keys[position], &e) {
        Some(found) => Failure::Invalid(found),
        None => Failure::Api(e),
    }
}
