//! The Kubernetes operator: `Monitor` and `AlertContact` custom resources
//! (`uptime.dev/v1alpha1`) kept equal to their API resources through the
//! API's apply path (`PUT /api/v1/{kind}/by-ref/{namespace}.{name}`), with
//! the monitor's state written back to the resource's status.
//!
//! - [`resources`]: the custom resource types (the CRDs are generated from
//!   them: [`crds`]).
//! - [`plan`]: the reconcile decisions, free of I/O (unit-tested), and
//!   [`body`]: the body a spec becomes.
//! - [`reconcile`]: the thin shell that carries them out, over
//!   [`cluster::Cluster`] (Kubernetes) and [`gateway::Gateway`] (the API).
//! - [`controller`]: the kube controllers, the ops server, the shutdown.
//! - [`settings`]: the operator's configuration (the API's URL and key, the
//!   namespace it watches, how often a resource is visited).

pub mod body;
pub mod cluster;
pub mod controller;
pub mod crds;
pub mod gateway;
pub mod plan;
pub mod reconcile;
pub mod resources;
pub mod settings;

use settings::OperatorSettings;
use tokio_util::sync::CancellationToken;

#[derive(Debug, thiserror::Error)]
pub enum OperatorError {
    #[error("operator.api_key is empty: the operator needs an API key (UPTIME_OPERATOR__API_KEY)")]
    MissingApiKey,
    #[error("operator.ref_prefix: {0}")]
    RefPrefix(plan::SpecProblem),
    #[error(transparent)]
    Gateway(#[from] gateway::GatewayError),
    #[error("connecting to Kubernetes: {0}")]
    Kube(#[from] kube::Error),
    #[error("ops server: {0}")]
    Ops(#[from] std::io::Error),
}

/// Refuses settings the operator cannot work with, before it connects to
/// anything.
pub fn check_settings(settings: &OperatorSettings) -> Result<(), OperatorError> {
    let tuning = &settings.operator;
    if tuning.api_key.is_empty() {
        return Err(OperatorError::MissingApiKey);
    }
    // The prefix must keep every ref valid: checked once on a short name.
    if !tuning.ref_prefix.is_empty() {
        plan::api_ref(&tuning.ref_prefix, "ns", "name").map_err(OperatorError::RefPrefix)?;
    }
    Ok(())
}

/// The reconciler of `settings`, over `cluster`.
pub fn reconciler<C>(
    settings: &OperatorSettings,
    cluster: C,
) -> Result<reconcile::Reconciler<C>, OperatorError> {
    check_settings(settings)?;
    let tuning = &settings.operator;
    Ok(reconcile::Reconciler {
        cluster,
        gateway: gateway::Gateway::new(&tuning.api_url, &tuning.api_key, tuning.http_timeout())?,
        ref_prefix: tuning.ref_prefix.clone(),
        timing: tuning.timing(),
    })
}

/// Connects to the cluster (in-cluster config or kubeconfig) and runs until
/// `shutdown`.
pub async fn run(
    settings: OperatorSettings,
    shutdown: CancellationToken,
) -> Result<(), OperatorError> {
    check_settings(&settings)?;
    let client = kube::Client::try_default().await?;
    let instance = std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "uptime-operator".into());
    let cluster = cluster::KubeCluster::new(client.clone(), instance);
    let reconciler = reconciler(&settings, cluster)?;
    controller::run_with(client, reconciler, &settings, shutdown).await
}
