//! An in-memory Kubernetes for the reconcile: Secrets the test puts in,
//! and the finalizers, statuses and events the operator writes.

use async_trait::async_trait;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use uptime_operator::cluster::{Cluster, ClusterError, Notice};
use uptime_operator::plan::{Kind, ResourceView};
use uptime_operator::resources::{ResourceStatus, SecretKeyRef};

type Key = (&'static str, String, String);

fn key_of(view: &ResourceView) -> Key {
    (
        view.kind.as_str(),
        view.namespace.clone(),
        view.name.clone(),
    )
}

#[derive(Default)]
struct State {
    secrets: BTreeMap<(String, String, String), String>,
    finalized: BTreeSet<Key>,
    statuses: BTreeMap<Key, ResourceStatus>,
    events: Vec<(Key, Notice)>,
}

#[derive(Default)]
pub struct MemoryCluster {
    state: Mutex<State>,
}

impl MemoryCluster {
    pub fn put_secret(&self, namespace: &str, name: &str, key: &str, value: &str) {
        self.state
            .lock()
            .unwrap()
            .secrets
            .insert((namespace.into(), name.into(), key.into()), value.into());
    }

    pub fn has_finalizer(&self, view: &ResourceView) -> bool {
        self.state.lock().unwrap().finalized.contains(&key_of(view))
    }

    pub fn status(&self, view: &ResourceView) -> Option<ResourceStatus> {
        self.state
            .lock()
            .unwrap()
            .statuses
            .get(&key_of(view))
            .cloned()
    }

    pub fn events(&self, view: &ResourceView) -> Vec<Notice> {
        let key = key_of(view);
        self.state
            .lock()
            .unwrap()
            .events
            .iter()
            .filter(|(k, _)| *k == key)
            .map(|(_, n)| n.clone())
            .collect()
    }
}

#[async_trait]
impl Cluster for MemoryCluster {
    async fn secret_value(
        &self,
        namespace: &str,
        key: &SecretKeyRef,
    ) -> Result<Option<String>, ClusterError> {
        Ok(self
            .state
            .lock()
            .unwrap()
            .secrets
            .get(&(namespace.into(), key.name.clone(), key.key.clone()))
            .cloned())
    }

    async fn resource_id(
        &self,
        kind: Kind,
        namespace: &str,
        name: &str,
    ) -> Result<Option<i64>, ClusterError> {
        let key = (kind.as_str(), namespace.to_string(), name.to_string());
        Ok(self
            .state
            .lock()
            .unwrap()
            .statuses
            .get(&key)
            .and_then(|s| s.id))
    }

    async fn add_finalizer(&self, resource: &ResourceView) -> Result<(), ClusterError> {
        self.state
            .lock()
            .unwrap()
            .finalized
            .insert(key_of(resource));
        Ok(())
    }

    async fn remove_finalizer(&self, resource: &ResourceView) -> Result<(), ClusterError> {
        self.state
            .lock()
            .unwrap()
            .finalized
            .remove(&key_of(resource));
        Ok(())
    }

    async fn write_status(
        &self,
        resource: &ResourceView,
        status: &ResourceStatus,
    ) -> Result<(), ClusterError> {
        self.state
            .lock()
            .unwrap()
            .statuses
            .insert(key_of(resource), status.clone());
        Ok(())
    }

    async fn record(&self, resource: &ResourceView, notice: &Notice) -> Result<(), ClusterError> {
        self.state
            .lock()
            .unwrap()
            .events
            .push((key_of(resource), notice.clone()));
        Ok(())
    }
}
