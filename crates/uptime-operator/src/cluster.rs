//! The Kubernetes side of a reconcile, as a small trait ([`Cluster`]) so
//! the reconcile runs against an in-memory cluster in tests, and its
//! implementation over kube's client ([`KubeCluster`]).

use crate::plan::{Kind, ResourceView};
use crate::resources::{AlertContact, Monitor, ResourceStatus, SecretKeyRef, GROUP, VERSION};
use async_trait::async_trait;
use k8s_openapi::api::core::v1::{ObjectReference, Secret};
use kube::api::{Patch, PatchParams};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::{Api, Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error("Kubernetes API: {0}")]
    Kube(#[from] kube::Error),
    #[error("key {key:?} of Secret {name:?} is not UTF-8")]
    NotUtf8 { name: String, key: String },
}

/// A note on a custom resource (a Kubernetes Event): what the operator did
/// or why it could not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub warning: bool,
    /// CamelCase, e.g. `Applied`, `Refused`, `Deleted`.
    pub reason: String,
    pub message: String,
}

/// What a reconcile needs of the cluster.
#[async_trait]
pub trait Cluster: Send + Sync {
    /// One key of a Secret in `namespace`; `None` when the Secret or the
    /// key does not exist.
    async fn secret_value(
        &self,
        namespace: &str,
        key: &SecretKeyRef,
    ) -> Result<Option<String>, ClusterError>;

    /// The API id in the status of the custom resource `kind`/`name` of
    /// `namespace`: `None` while it has none (absent, not applied yet, or
    /// being deleted).
    async fn resource_id(
        &self,
        kind: Kind,
        namespace: &str,
        name: &str,
    ) -> Result<Option<i64>, ClusterError>;

    /// Adds the operator's finalizer (nothing when it is there or the
    /// resource is gone).
    async fn add_finalizer(&self, resource: &ResourceView) -> Result<(), ClusterError>;

    /// Removes the operator's finalizer, letting the resource go.
    async fn remove_finalizer(&self, resource: &ResourceView) -> Result<(), ClusterError>;

    /// Replaces the resource's status.
    async fn write_status(
        &self,
        resource: &ResourceView,
        status: &ResourceStatus,
    ) -> Result<(), ClusterError>;

    /// Records a Kubernetes Event on the resource.
    async fn record(&self, resource: &ResourceView, notice: &Notice) -> Result<(), ClusterError>;
}

/// The status as a JSON merge patch: every field of the status, the ones
/// without a value as `null` (a merge patch leaves absent fields alone, and
/// an incident that closed must leave the status).
pub fn status_patch(status: &ResourceStatus) -> Value {
    let mut value = serde_json::to_value(status).unwrap_or_else(|_| json!({}));
    if let Value::Object(fields) = &mut value {
        for name in [
            "observedGeneration",
            "id",
            "ref",
            "state",
            "lastCheckedAt",
            "openIncidentId",
            "lastAppliedAt",
            "conditions",
        ] {
            fields.entry(name).or_insert(Value::Null);
        }
    }
    json!({ "status": value })
}

/// The finalizers after adding or removing the operator's.
pub fn finalizers_with(current: &[String], present: bool) -> Vec<String> {
    let mut list: Vec<String> = current
        .iter()
        .filter(|f| f.as_str() != crate::plan::FINALIZER)
        .cloned()
        .collect();
    if present {
        list.push(crate::plan::FINALIZER.to_string());
    }
    list
}

/// The cluster through kube's client.
#[derive(Clone)]
pub struct KubeCluster {
    client: Client,
    recorder: Recorder,
}

/// What kube's typed `Api` asks of a namespaced custom resource (both of
/// ours are), named once for the typed calls below.
trait NamespacedResource:
    Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
    + Clone
    + DeserializeOwned
    + std::fmt::Debug
{
}

impl<K> NamespacedResource for K where
    K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug
{
}

impl KubeCluster {
    pub fn new(client: Client, instance: String) -> Self {
        let reporter = Reporter {
            controller: "uptime-operator".into(),
            instance: Some(instance),
        };
        Self {
            recorder: Recorder::new(client.clone(), reporter),
            client,
        }
    }

    async fn set_finalizer<K>(
        &self,
        namespace: &str,
        name: &str,
        present: bool,
    ) -> Result<(), ClusterError>
    where
        K: NamespacedResource,
    {
        let api: Api<K> = Api::namespaced(self.client.clone(), namespace);
        let Some(current) = api.get_opt(name).await? else {
            return Ok(());
        };
        let wanted = finalizers_with(current.finalizers(), present);
        if wanted.as_slice() == current.finalizers() {
            return Ok(());
        }
        // The resourceVersion makes the merge patch conditional: a list
        // changed meanwhile by another controller is a conflict (retried by
        // the next visit), never overwritten.
        let patch = json!({"metadata": {
            "finalizers": wanted,
            "resourceVersion": current.resource_version(),
        }});
        api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await?;
        Ok(())
    }

    async fn patch_status<K>(
        &self,
        namespace: &str,
        name: &str,
        status: &ResourceStatus,
    ) -> Result<(), ClusterError>
    where
        K: NamespacedResource,
    {
        let api: Api<K> = Api::namespaced(self.client.clone(), namespace);
        match api
            .patch_status(
                name,
                &PatchParams::default(),
                &Patch::Merge(&status_patch(status)),
            )
            .await
        {
            Ok(_) => Ok(()),
            // Deleted meanwhile: there is no status left to write.
            Err(kube::Error::Api(e)) if e.code == 404 => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

/// Runs `$body` with `$k` standing for the custom resource type of
/// `$kind`: kube's `Api` is typed by the resource, while a reconcile holds
/// its kind as a value, so every typed call dispatches here once.
macro_rules! with_kind {
    ($kind:expr, $k:ident => $body:expr) => {
        match $kind {
            Kind::Monitor => {
                type $k = Monitor;
                $body
            }
            Kind::AlertContact => {
                type $k = AlertContact;
                $body
            }
        }
    };
}

#[async_trait]
impl Cluster for KubeCluster {
    async fn secret_value(
        &self,
        namespace: &str,
        key: &SecretKeyRef,
    ) -> Result<Option<String>, ClusterError> {
        let api: Api<Secret> = Api::namespaced(self.client.clone(), namespace);
        let Some(secret) = api.get_opt(&key.name).await? else {
            return Ok(None);
        };
        let Some(bytes) = secret.data.as_ref().and_then(|d| d.get(&key.key)) else {
            return Ok(None);
        };
        String::from_utf8(bytes.0.clone())
            .map(Some)
            .map_err(|_| ClusterError::NotUtf8 {
                name: key.name.clone(),
                key: key.key.clone(),
            })
    }

    async fn resource_id(
        &self,
        kind: Kind,
        namespace: &str,
        name: &str,
    ) -> Result<Option<i64>, ClusterError> {
        let id = with_kind!(kind, K => {
            Api::<K>::namespaced(self.client.clone(), namespace)
                .get_opt(name)
                .await?
                .filter(|r| r.meta().deletion_timestamp.is_none())
                .and_then(|r| r.status?.id)
        });
        Ok(id)
    }

    async fn add_finalizer(&self, resource: &ResourceView) -> Result<(), ClusterError> {
        with_kind!(resource.kind, K => {
            self.set_finalizer::<K>(&resource.namespace, &resource.name, true)
                .await
        })
    }

    async fn remove_finalizer(&self, resource: &ResourceView) -> Result<(), ClusterError> {
        with_kind!(resource.kind, K => {
            self.set_finalizer::<K>(&resource.namespace, &resource.name, false)
                .await
        })
    }

    async fn write_status(
        &self,
        resource: &ResourceView,
        status: &ResourceStatus,
    ) -> Result<(), ClusterError> {
        with_kind!(resource.kind, K => {
            self.patch_status::<K>(&resource.namespace, &resource.name, status)
                .await
        })
    }

    async fn record(&self, resource: &ResourceView, notice: &Notice) -> Result<(), ClusterError> {
        let regarding = ObjectReference {
            api_version: Some(format!("{GROUP}/{VERSION}")),
            kind: Some(resource.kind.as_str().to_string()),
            name: Some(resource.name.clone()),
            namespace: Some(resource.namespace.clone()),
            uid: resource.uid.clone(),
            ..Default::default()
        };
        let event = Event {
            type_: if notice.warning {
                EventType::Warning
            } else {
                EventType::Normal
            },
            reason: notice.reason.clone(),
            note: Some(notice.message.clone()),
            action: "Reconcile".into(),
            secondary: None,
        };
        self.recorder.publish(&event, &regarding).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_patch_clears_what_is_gone() {
        let status = ResourceStatus {
            id: Some(3),
            state: Some("up".into()),
            ..Default::default()
        };
        let patch = status_patch(&status);
        assert_eq!(patch["status"]["id"], 3);
        assert_eq!(patch["status"]["state"], "up");
        // A resolved incident must leave the status: an explicit null.
        assert!(patch["status"]
            .as_object()
            .unwrap()
            .get("openIncidentId")
            .is_some_and(Value::is_null));
        assert!(patch["status"]["conditions"].is_null());
    }

    #[test]
    fn finalizers_keep_the_others_in_order() {
        let others = vec!["a/x".to_string(), "b/y".to_string()];
        let with = finalizers_with(&others, true);
        assert_eq!(with, vec!["a/x", "b/y", crate::plan::FINALIZER]);
        assert_eq!(finalizers_with(&with, true), with, "added once");
        assert_eq!(finalizers_with(&with, false), others);
    }
}
