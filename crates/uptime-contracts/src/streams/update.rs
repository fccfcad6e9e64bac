//! Create-or-update of the streams at start.
//!
//! `get_or_create_stream` leaves an existing stream as it is, so limits added
//! in a release (or changed in the configuration) never reached a stream
//! created before. [`ensure`] compares each existing stream with its
//! declaration field by field and updates what differs. JetStream cannot
//! change a stream's retention or storage in place: such a stream is left
//! untouched and reported (an error log), because half-applying it would be
//! worse (a `discard: new` limit on a stream that is not a work queue would
//! refuse every publish once full, until old messages expire).

use super::configs;
use async_nats::jetstream::context::{
    CreateStreamError, CreateStreamErrorKind, GetStreamError, GetStreamErrorKind,
};
use async_nats::jetstream::{self, stream, ErrorCode};
use uptime_config::NatsSettings;

#[derive(Debug, thiserror::Error)]
pub enum StreamsError {
    #[error("invalid stream settings: {0}")]
    Invalid(String),
    #[error("reading stream {stream}: {source}")]
    Get {
        stream: String,
        source: GetStreamError,
    },
    #[error("creating stream {stream}: {source}")]
    Create {
        stream: String,
        source: CreateStreamError,
    },
    #[error("updating stream {stream} ({changes}): {source}")]
    Update {
        stream: String,
        changes: String,
        source: CreateStreamError,
    },
}

/// One field of a stream: what it is and what it is declared to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldChange {
    pub field: &'static str,
    pub from: String,
    pub to: String,
}

impl std::fmt::Display for FieldChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} -> {}", self.field, self.from, self.to)
    }
}

/// What [`ensure`] did with one stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ensured {
    Created,
    /// Already as declared.
    Unchanged,
    /// These fields were updated.
    Updated(Vec<FieldChange>),
    /// These fields differ and JetStream cannot change them in place; the
    /// stream was left as it is.
    Incompatible(Vec<FieldChange>),
}

/// Creates every missing stream and updates every existing one whose
/// configuration differs from `settings`, logging each change. Safe to call
/// from every service at start, at the same time.
pub async fn ensure(
    js: &jetstream::Context,
    settings: &NatsSettings,
) -> Result<Vec<(String, Ensured)>, StreamsError> {
    let mut done = Vec::new();
    for desired in configs(settings)? {
        let name = desired.name.clone();
        let ensured = ensure_one(js, desired).await?;
        match &ensured {
            Ensured::Created => tracing::info!(stream = %name, "stream created"),
            Ensured::Unchanged => tracing::debug!(stream = %name, "stream up to date"),
            Ensured::Updated(changes) => {
                tracing::info!(stream = %name, changes = %joined(changes), "stream configuration updated")
            }
            Ensured::Incompatible(changes) => tracing::error!(
                stream = %name,
                differences = %joined(changes),
                "stream cannot be changed in place and was left as it is; \
                 see docs/operations.md (stream limits) to re-create it"
            ),
        }
        done.push((name, ensured));
    }
    Ok(done)
}

async fn ensure_one(
    js: &jetstream::Context,
    desired: stream::Config,
) -> Result<Ensured, StreamsError> {
    let name = desired.name.clone();
    // A second round only when another service created the stream between
    // our look-up and our create: then it exists and is compared like any.
    for _ in 0..2 {
        let current = match js.get_stream(&name).await {
            Ok(stream) => stream.cached_info().config.clone(),
            Err(e) if is_not_found(&e) => match js.create_stream(desired.clone()).await {
                Ok(_) => return Ok(Ensured::Created),
                Err(e) if is_name_taken(&e) => continue,
                Err(source) => {
                    return Err(StreamsError::Create {
                        stream: name,
                        source,
                    })
                }
            },
            Err(source) => {
                return Err(StreamsError::Get {
                    stream: name,
                    source,
                })
            }
        };
        let plan = reconcile(&current, &desired);
        if !plan.fixed.is_empty() {
            return Ok(Ensured::Incompatible(plan.fixed));
        }
        if plan.changed.is_empty() {
            return Ok(Ensured::Unchanged);
        }
        return match js.update_stream(&plan.config).await {
            Ok(_) => Ok(Ensured::Updated(plan.changed)),
            Err(source) => Err(StreamsError::Update {
                stream: name,
                changes: joined(&plan.changed),
                source,
            }),
        };
    }
    Ok(Ensured::Unchanged)
}

fn is_not_found(e: &GetStreamError) -> bool {
    matches!(e.kind(), GetStreamErrorKind::JetStream(err) if err.error_code() == ErrorCode::STREAM_NOT_FOUND)
}

fn is_name_taken(e: &CreateStreamError) -> bool {
    matches!(e.kind(), CreateStreamErrorKind::JetStream(err) if err.error_code() == ErrorCode::STREAM_NAME_EXIST)
}

fn joined(changes: &[FieldChange]) -> String {
    changes
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// How an existing stream becomes its declaration.
#[derive(Debug)]
pub(crate) struct Reconciled {
    /// The current configuration with every changeable field as declared
    /// (fields this code does not declare, and server metadata, kept).
    pub config: stream::Config,
    /// Changeable fields that differ.
    pub changed: Vec<FieldChange>,
    /// Fields that differ and cannot be changed on an existing stream.
    pub fixed: Vec<FieldChange>,
}

pub(crate) fn reconcile(current: &stream::Config, desired: &stream::Config) -> Reconciled {
    let mut config = current.clone();
    let mut changed = Vec::new();
    let mut fixed = Vec::new();
    macro_rules! compare {
        ($list:ident, $($field:ident),+) => {$(
            if current.$field != desired.$field {
                $list.push(FieldChange {
                    field: stringify!($field),
                    from: format!("{:?}", current.$field),
                    to: format!("{:?}", desired.$field),
                });
                config.$field = desired.$field.clone();
            }
        )+};
    }
    compare!(fixed, retention, storage);
    compare!(
        changed,
        subjects,
        max_age,
        max_bytes,
        max_messages,
        discard,
        duplicate_window,
        num_replicas
    );
    Reconciled {
        config,
        changed,
        fixed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::streams::{all, CHECKS_STREAM};
    use std::collections::HashMap;
    use std::time::Duration;

    fn checks() -> stream::Config {
        all(1)
            .into_iter()
            .find(|c| c.name == CHECKS_STREAM)
            .unwrap()
    }

    #[test]
    fn a_stream_as_declared_needs_nothing_even_with_server_metadata() {
        let desired = checks();
        let mut current = desired.clone();
        current.metadata = HashMap::from([("_nats.ver".to_string(), "2.15.1".to_string())]);
        current.compression = Some(stream::Compression::None);
        let plan = reconcile(&current, &desired);
        assert!(plan.changed.is_empty() && plan.fixed.is_empty(), "{plan:?}");
    }

    #[test]
    fn limits_of_an_old_stream_are_changed_and_the_rest_kept() {
        let desired = checks();
        let mut current = desired.clone();
        current.max_age = Duration::ZERO;
        current.max_bytes = -1;
        current.discard = stream::DiscardPolicy::Old;
        current.description = Some("kept".into());
        let plan = reconcile(&current, &desired);
        let fields: Vec<_> = plan.changed.iter().map(|c| c.field).collect();
        assert_eq!(fields, ["max_age", "max_bytes", "discard"]);
        assert!(plan.fixed.is_empty());
        assert_eq!(plan.config.max_bytes, desired.max_bytes);
        assert_eq!(plan.config.description.as_deref(), Some("kept"));
    }

    #[test]
    fn retention_and_storage_are_reported_not_changed() {
        let desired = checks();
        let mut current = desired.clone();
        current.retention = stream::RetentionPolicy::Limits;
        current.storage = stream::StorageType::Memory;
        let plan = reconcile(&current, &desired);
        let fields: Vec<_> = plan.fixed.iter().map(|c| c.field).collect();
        assert_eq!(fields, ["retention", "storage"]);
    }
}
