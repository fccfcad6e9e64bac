//! The running operator: one kube controller per kind over the same
//! [`Reconciler`], the ops server, and a graceful stop on SIGTERM (the
//! visits in progress finish; nothing is cut between a PUT and its status).

use crate::cluster::KubeCluster;
use crate::plan::ResourceView;
use crate::reconcile::{ReconcileError, Reconciler};
use crate::resources::{AlertContact, Monitor};
use crate::OperatorError;
use chrono::Utc;
use futures::StreamExt;
use kube::runtime::controller::{Action, Config as ControllerConfig, Controller};
use kube::runtime::watcher;
use kube::{Api, Client, Resource};
use serde::de::DeserializeOwned;
use std::fmt::Debug;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

type Context = Reconciler<KubeCluster>;

async fn reconcile<K>(resource: Arc<K>, ctx: Arc<Context>) -> Result<Action, ReconcileError>
where
    for<'a> ResourceView: From<&'a K>,
{
    let view = ResourceView::from(resource.as_ref());
    Ok(match ctx.reconcile(view, Utc::now()).await? {
        Some(after) => Action::requeue(after),
        None => Action::await_change(),
    })
}

fn error_policy<K>(_: Arc<K>, error: &ReconcileError, ctx: Arc<Context>) -> Action {
    tracing::warn!(%error, "reconcile failed; retrying");
    Action::requeue(ctx.timing.retry_unreachable)
}

/// A future that resolves once `shutdown` is cancelled, and is `Sync` as
/// kube's graceful shutdown wants it.
fn stop_signal(
    shutdown: &CancellationToken,
) -> impl std::future::Future<Output = ()> + Send + Sync + 'static {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let token = shutdown.clone();
    tokio::spawn(async move {
        token.cancelled().await;
        let _ = tx.send(());
    });
    async move {
        let _ = rx.await;
    }
}

async fn run_controller<K>(
    api: Api<K>,
    ctx: Arc<Context>,
    config: ControllerConfig,
    shutdown: &CancellationToken,
) where
    K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + Debug
        + Send
        + Sync
        + 'static,
    for<'a> ResourceView: From<&'a K>,
{
    let kind = K::kind(&()).to_string();
    Controller::new(api, watcher::Config::default())
        .with_config(config)
        .graceful_shutdown_on(stop_signal(shutdown))
        .run(reconcile::<K>, error_policy::<K>, ctx)
        .for_each(|result| {
            if let Err(error) = result {
                tracing::debug!(%kind, %error, "controller");
            }
            futures::future::ready(())
        })
        .await;
}

fn api<K>(client: &Client, namespace: &str) -> Api<K>
where
    K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>,
{
    if namespace.is_empty() {
        Api::all(client.clone())
    } else {
        Api::namespaced(client.clone(), namespace)
    }
}

/// Runs both controllers until `shutdown`.
pub async fn run_with(
    client: Client,
    reconciler: Reconciler<KubeCluster>,
    settings: &crate::settings::OperatorSettings,
    shutdown: CancellationToken,
) -> Result<(), OperatorError> {
    let namespace = settings.operator.watch_namespace.as_str();
    let readiness = {
        let client = client.clone();
        uptime_ops::Readiness::new().with_check("kubernetes", move || {
            let client = client.clone();
            async move {
                client
                    .apiserver_version()
                    .await
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            }
        })
    };
    let ops = uptime_ops::OpsServer::bind(&settings.ops.listen, readiness)?;
    let watched = if namespace.is_empty() {
        "(all)"
    } else {
        namespace
    };
    tracing::info!(ops = %ops.addr, namespace = watched, "uptime-operator started");
    let config = ControllerConfig::default().concurrency(settings.operator.concurrency.max(1));
    let ctx = Arc::new(reconciler);
    let (ops, (), ()) = tokio::join!(
        ops.run(shutdown.clone()),
        run_controller(
            api::<Monitor>(&client, namespace),
            ctx.clone(),
            config.clone(),
            &shutdown
        ),
        run_controller(
            api::<AlertContact>(&client, namespace),
            ctx,
            config,
            &shutdown
        ),
    );
    if let Err(e) = ops {
        tracing::warn!(error = %e, "ops server stopped with an error");
    }
    tracing::info!("uptime-operator stopped");
    Ok(())
}
