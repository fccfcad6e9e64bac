//! Building and running the HTTP server.

use crate::http::body_limits::{json_config, MAX_BODY_BYTES};
use crate::http::error::{extractors, ApiError};
use crate::http::rate_limit::RateLimiter;
use crate::settings::GatewaySettings;
use crate::state::AppState;
use actix_web::dev::{Server, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::middleware::{ErrorHandlerResponse, ErrorHandlers};
use actix_web::{web, App, HttpServer, ResponseError};
use std::net::SocketAddr;
use tokio_util::sync::CancellationToken;

pub struct Application {
    addr: SocketAddr,
    server: Server,
    /// `/healthz`, `/readyz` and `/metrics` on `ops.listen`, off the public
    /// API port (metrics are for operators only).
    ops: uptime_ops::OpsServer,
    state: web::Data<AppState>,
    /// Drops revoked keys from this replica's cache; ends with the server.
    revocations: crate::access::key_revocations::Listener,
}

impl Application {
    /// Connects to PostgreSQL and NATS, creates the streams and binds the
    /// API and ops listeners (port 0 picks a free one).
    pub async fn build(settings: GatewaySettings) -> anyhow::Result<Self> {
        settings.validate()?;
        // Shared, not copied: requests borrow the one keyring.
        let keyring =
            uptime_secrets::Keyring::from_settings(&settings.secrets)?.map(std::sync::Arc::new);
        let ack_links = uptime_alerts::AckLinks::from_settings(&settings.ack_links)?;
        let pool = uptime_db::connect(&settings.database)?;
        crate::sealing::seal_stored_passwords(&pool, keyring.as_deref()).await?;
        let (nats, js) = uptime_contracts::bus::connect(&settings.nats, "api-gateway").await?;
        uptime_contracts::streams::ensure(&js, &settings.nats).await?;
        let presence = uptime_contracts::presence::open_or_create_replicated(
            &js,
            std::time::Duration::from_secs(settings.regions.presence_ttl_secs),
            settings.nats.stream_replicas,
        )
        .await?;
        let state = web::Data::new(AppState {
            pool,
            nats,
            js,
            presence,
            rate_limiter: RateLimiter::new(settings.rate_limit.clone()),
            heartbeat_limiter: RateLimiter::new(settings.heartbeat_limit.clone().into()),
            unknown_keys: crate::access::auth_cache::UnknownKeys::new(&settings.auth),
            known_keys: crate::access::auth_cache::KnownKeys::new(&settings.auth),
            keyring,
            tenant_metrics: crate::metrics_pages::page_cache(&settings.tenant_metrics),
            ack_links,
            settings: settings.clone(),
        });

        let revocations = crate::access::key_revocations::listen(state.clone()).await?;

        let readiness = uptime_ops::Readiness::new()
            .with_check("postgres", uptime_db::pool::readiness_check(&state.pool))
            .with_nats(&state.nats);
        let ops = uptime_ops::OpsServer::bind(&settings.ops.listen, readiness.clone())?;
        let app_state = state.clone();
        let mut server = HttpServer::new(move || {
            App::new()
                .wrap(
                    ErrorHandlers::new().handler(StatusCode::METHOD_NOT_ALLOWED, |res| {
                        json_error(res, ApiError::MethodNotAllowed)
                    }),
                )
                .wrap(actix_web::middleware::Compress::default())
                .wrap(actix_web::middleware::from_fn(
                    crate::http::middleware::request_metrics,
                ))
                // Outermost: a panic in one request does not end the
                // process (every other panic does: `uptime_telemetry::panics`).
                .wrap(actix_web::middleware::from_fn(
                    uptime_ops::contain_request_panics,
                ))
                .app_data(app_state.clone())
                .app_data(json_config(MAX_BODY_BYTES))
                .app_data(web::PathConfig::default().error_handler(extractors::path))
                .app_data(web::QueryConfig::default().error_handler(extractors::query))
                .app_data(web::PayloadConfig::default().limit(MAX_BODY_BYTES))
                // Probes stay on the public port too (external load
                // balancers may only reach it); `/metrics` does not.
                .configure(uptime_ops::configure_probes(readiness.clone()))
                .configure(crate::api::configure)
                .default_service(web::to(|| async {
                    Err::<actix_web::HttpResponse, _>(ApiError::NotFound)
                }))
        })
        .disable_signals();
        if settings.http.workers > 0 {
            server = server.workers(settings.http.workers);
        }
        let server = server.bind(&settings.http.listen)?;
        let addr = server.addrs()[0];
        Ok(Self {
            addr,
            server: server.run(),
            ops,
            state,
            revocations,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Where `/healthz`, `/readyz` and `/metrics` are served for operators.
    pub fn ops_addr(&self) -> SocketAddr {
        self.ops.addr
    }

    pub fn state(&self) -> web::Data<AppState> {
        self.state.clone()
    }

    /// Serves until `shutdown` is cancelled, then drains in-flight requests.
    pub async fn run_until(self, shutdown: CancellationToken) -> std::io::Result<()> {
        let ops = tokio::spawn(self.ops.run(shutdown.clone()));
        let handle = self.server.handle();
        tokio::spawn(async move {
            shutdown.cancelled().await;
            handle.stop(true).await;
        });
        let served = self.server.await;
        drop(self.revocations);
        if let Ok(Err(e)) = ops.await {
            tracing::warn!(error = %e, "ops server stopped with an error");
        }
        served
    }
}

/// Replaces a framework error response (e.g. 405 from a resource) with our JSON body.
fn json_error<B>(
    res: ServiceResponse<B>,
    error: ApiError,
) -> actix_web::Result<ErrorHandlerResponse<B>> {
    // A 405 keeps the `Allow` header actix-web sets (the resource's methods).
    let allow = res.headers().get(actix_web::http::header::ALLOW).cloned();
    let (req, _) = res.into_parts();
    let mut response = error.error_response();
    if let Some(allow) = allow {
        response
            .headers_mut()
            .insert(actix_web::http::header::ALLOW, allow);
    }
    let res = ServiceResponse::new(req, response).map_into_right_body();
    Ok(ErrorHandlerResponse::Response(res))
}
