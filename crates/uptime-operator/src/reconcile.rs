//! One visit of a custom resource: the thin shell around [`crate::plan`].
//! It asks the cluster ([`Cluster`]) and the API ([`Gateway`]) what the
//! decisions need, and carries out what they decide.

use crate::cluster::{Cluster, ClusterError, Notice};
use crate::gateway::{Gateway, GatewayError};
use crate::plan::{
    apply_body, next_step, ready_condition, referenced, requeue_after, secret_keys, status_after,
    Kind, Outcome, ResourceView, SpecProblem, Step, Timing,
};
use chrono::{DateTime, Utc};
use std::collections::BTreeMap;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum ReconcileError {
    #[error(transparent)]
    Cluster(#[from] ClusterError),
}

/// Everything a visit needs besides the resource.
pub struct Reconciler<C> {
    pub cluster: C,
    pub gateway: Gateway,
    /// Put before `<namespace>.<name>` in every ref (one tenant shared by
    /// several clusters).
    pub ref_prefix: String,
    pub timing: Timing,
}

impl<C: Cluster> Reconciler<C> {
    /// Brings the API resource of `view` in line with it and writes the
    /// status; the answer is when to visit again (`None`: only when the
    /// resource changes).
    pub async fn reconcile(
        &self,
        mut view: ResourceView,
        now: DateTime<Utc>,
    ) -> Result<Option<Duration>, ReconcileError> {
        let outcome = loop {
            match next_step(&view, &self.ref_prefix, &self.timing, now) {
                Step::AddFinalizer => {
                    self.cluster.add_finalizer(&view).await?;
                    view.has_finalizer = true;
                }
                Step::Done => return Ok(None),
                Step::Release => {
                    self.cluster.remove_finalizer(&view).await?;
                    return Ok(None);
                }
                Step::Delete { api_ref, known_id } => {
                    return self.delete(&view, &api_ref, known_id, now).await;
                }
                Step::Idle { wait } => return Ok(Some(wait)),
                Step::Refuse(problem) => break Outcome::Invalid(problem),
                Step::Apply { api_ref } => break self.apply(&view, &api_ref).await?,
                Step::Observe { id } => match self.observe(view.kind, id).await {
                    Some(outcome) => break outcome,
                    // Deleted through the API: create it again.
                    None => {
                        view.status.last_applied_at = None;
                    }
                },
            }
        };
        metrics::counter!(
            "uptime_operator_reconciles_total",
            "kind" => view.kind.as_str(),
            "outcome" => outcome_label(&outcome),
        )
        .increment(1);
        let status = status_after(&view, &self.ref_prefix, &outcome, now);
        if status != view.status {
            self.cluster.write_status(&view, &status).await?;
            if let Some(notice) = notice_of(&view, &status) {
                // An event is a courtesy: its failure fails nothing.
                if let Err(e) = self.cluster.record(&view, &notice).await {
                    tracing::warn!(error = %e, name = %view.name, "recording an event");
                }
            }
        }
        Ok(Some(requeue_after(view.kind, &outcome, &self.timing)))
    }

    async fn apply(&self, view: &ResourceView, api_ref: &str) -> Result<Outcome, ReconcileError> {
        let mut secrets = BTreeMap::new();
        for key in secret_keys(view) {
            if let Some(value) = self.cluster.secret_value(&view.namespace, &key).await? {
                secrets.insert(key, value);
            }
        }
        let mut ids = BTreeMap::new();
        for (kind, name) in referenced(view) {
            if let Some(id) = self
                .cluster
                .resource_id(kind, &view.namespace, &name)
                .await?
            {
                ids.insert((kind, name), id);
            }
        }
        let body = match apply_body(view, &ids, &secrets) {
            Ok(body) => body,
            Err(problem) => return Ok(Outcome::Invalid(problem)),
        };
        let applied = match self.gateway.put_by_ref(view.kind, api_ref, &body).await {
            Ok(resource) => self.gateway.observe(view.kind, &resource).await,
            Err(e) => Err(e),
        };
        Ok(match applied {
            Ok(seen) => {
                tracing::info!(kind = view.kind.as_str(), %api_ref, id = seen.id, "applied");
                Outcome::Applied(seen)
            }
            Err(e) => gateway_outcome(e),
        })
    }

    /// The resource's current state; `None` when it is gone from the API.
    async fn observe(&self, kind: Kind, id: i64) -> Option<Outcome> {
        let seen = match self.gateway.get(kind, id).await {
            Ok(Some(resource)) => self.gateway.observe(kind, &resource).await,
            Ok(None) => return None,
            Err(e) => Err(e),
        };
        Some(match seen {
            Ok(seen) => Outcome::Observed(seen),
            Err(e) => gateway_outcome(e),
        })
    }

    async fn delete(
        &self,
        view: &ResourceView,
        api_ref: &str,
        known_id: Option<i64>,
        now: DateTime<Utc>,
    ) -> Result<Option<Duration>, ReconcileError> {
        let id = match known_id {
            Some(id) => Ok(Some(id)),
            None => self.gateway.find_by_ref(view.kind, api_ref).await,
        };
        let deleted = match id {
            Ok(Some(id)) => self.gateway.delete(view.kind, id).await,
            Ok(None) => Ok(()),
            Err(e) => Err(e),
        };
        match deleted {
            Ok(()) => {
                tracing::info!(kind = view.kind.as_str(), %api_ref, "deleted");
                self.cluster.remove_finalizer(view).await?;
                Ok(None)
            }
            // The finalizer stays: the custom resource remains (and says
            // why) until the API resource is gone.
            Err(e) => {
                let outcome = match gateway_outcome(e) {
                    Outcome::Refused { message } => Outcome::Invalid(SpecProblem {
                        reason: "DeleteRefused",
                        message,
                    }),
                    other => other,
                };
                let status = status_after(view, &self.ref_prefix, &outcome, now);
                if status != view.status {
                    self.cluster.write_status(view, &status).await?;
                }
                Ok(Some(requeue_after(view.kind, &outcome, &self.timing)))
            }
        }
    }
}

fn gateway_outcome(error: GatewayError) -> Outcome {
    match error {
        GatewayError::Refused(message) => Outcome::Refused { message },
        GatewayError::Unreachable(message) => Outcome::Unreachable { message },
        GatewayError::Client(e) => Outcome::Unreachable {
            message: e.to_string(),
        },
    }
}

fn outcome_label(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::Applied(_) => "applied",
        Outcome::Observed(_) => "observed",
        Outcome::Refused { .. } => "refused",
        Outcome::Unreachable { .. } => "unreachable",
        Outcome::Invalid(_) => "invalid",
    }
}

/// An event when the `Ready` condition says something new.
fn notice_of(view: &ResourceView, status: &crate::resources::ResourceStatus) -> Option<Notice> {
    let now = ready_condition(status)?;
    let before = ready_condition(&view.status);
    let changed = before.is_none_or(|b| {
        b.reason != now.reason
            || b.message != now.message
            || b.observed_generation != now.observed_generation
    });
    changed.then(|| Notice {
        warning: now.status != "True",
        reason: now.reason.clone(),
        message: now.message.clone(),
    })
}
