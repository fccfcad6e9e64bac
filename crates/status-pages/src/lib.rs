//! The status-pages service: public status pages and badges of chosen
//! monitors, served from an in-memory snapshot of PostgreSQL.
//!
//! - [`refresh`]: reads what is shown in a fixed set of statements every
//!   few seconds and swaps in a new [`snapshot::Snapshot`], pages and
//!   badges rendered and compressed once per change;
//! - [`serve`]: the routes, answered from the snapshot alone (ETag/304,
//!   gzip/brotli, per-address rate limits); [`methods`]: HEAD wherever GET
//!   is served, 405 with `Allow` for a method a route does not serve;
//! - [`model`], [`maintenance`] and [`render`]: what is shown and how,
//!   free of I/O;
//! - [`subscribe`]: email subscriptions with double opt-in, the only
//!   routes that write to PostgreSQL (a subscriber and its confirmation
//!   mail, which the notifier sends).
//!
//! Readiness (`/readyz`) is the first snapshot: after it, the service
//! keeps serving the last one through a database outage.
//!
//! Also: [`rate_limit`] (a token bucket per client address),
//! `subscribe_pages` (the plain HTML of the subscription routes) and
//! [`settings`].

pub mod maintenance;
pub mod methods;
pub mod model;
pub mod rate_limit;
pub mod refresh;
pub mod render;
pub mod serve;
pub mod settings;
pub mod snapshot;
pub mod subscribe;
mod subscribe_pages;

use settings::StatusPagesSettings;
use std::net::SocketAddr;
use tokio_util::sync::CancellationToken;

#[derive(Debug, thiserror::Error)]
pub enum StatusPagesError {
    #[error(transparent)]
    Db(#[from] uptime_db::DbError),
    #[error("binding a listener: {0}")]
    Bind(#[from] std::io::Error),
}

/// A bound service: its public and ops listeners, not yet serving.
pub struct StatusPages {
    settings: StatusPagesSettings,
    pool: uptime_db::Pool,
    shared: refresh::Shared,
    server: actix_web::dev::Server,
    addr: SocketAddr,
    shell: uptime_ops::Shell,
    /// Ticked by every refresh (`/readyz`).
    refreshes: uptime_ops::Progress,
}

impl StatusPages {
    /// Builds the pool (lazily connected) and binds both listeners (port 0
    /// picks a free one).
    pub async fn build(settings: StatusPagesSettings) -> Result<Self, StatusPagesError> {
        let pool = uptime_db::connect(&settings.database)?;
        let shared = refresh::Shared::default();
        let ready = shared.clone();
        let readiness = uptime_ops::Readiness::new().with_check("snapshot", move || {
            let loaded = ready.generation() > 0;
            async move {
                if loaded {
                    Ok(())
                } else {
                    Err("no snapshot loaded yet".to_string())
                }
            }
        });
        let shell = uptime_ops::Shell::bind("status-pages", &settings.ops, readiness)?;
        // The refresh loop: `/readyz` says when it stops coming round (the
        // pages would go on showing an old snapshot).
        let refreshes = shell.watch(
            "status-pages refresh",
            settings.status_pages.refresh_interval(),
        );
        let serve_settings = &settings.status_pages;
        let state = actix_web::web::Data::new(serve::ServeState {
            shared: shared.clone(),
            limiter: rate_limit::RateLimiter::new(
                serve_settings.rate_limit_per_second,
                serve_settings.rate_limit_burst,
                serve_settings.rate_limit_capacity,
            ),
            trust_forwarded_for: serve_settings.trust_forwarded_for,
            pool: pool.clone(),
            subscribe_limiter: rate_limit::RateLimiter::per_hour(
                serve_settings.subscribe_rate_limit_per_hour,
                serve_settings.subscribe_rate_limit_burst,
                serve_settings.rate_limit_capacity,
            ),
            public_base_url: serve_settings.public_base_url.clone(),
            max_subscribers_per_page: serve_settings.max_subscribers_per_page,
        });
        // The ops server's checks, sharing its cached result.
        let probes = shell.readiness();
        let mut server = actix_web::HttpServer::new(move || {
            actix_web::App::new()
                // A panic in one request does not end the process (every
                // other panic does: `uptime_telemetry::panics`).
                .wrap(actix_web::middleware::from_fn(
                    uptime_ops::contain_request_panics,
                ))
                .wrap(actix_web::middleware::from_fn(methods::head_as_get))
                .app_data(state.clone())
                .configure(uptime_ops::configure_probes(probes.clone()))
                .configure(serve::configure)
                .configure(subscribe::configure)
        })
        .disable_signals()
        .bind(&serve_settings.listen)?;
        if serve_settings.workers > 0 {
            server = server.workers(serve_settings.workers);
        }
        let addr = server.addrs()[0];
        Ok(Self {
            server: server.run(),
            settings,
            pool,
            shared,
            addr,
            shell,
            refreshes,
        })
    }

    /// The public listener's address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn ops_addr(&self) -> SocketAddr {
        self.shell.addr()
    }

    /// The snapshot in use (tests wait on its refreshes).
    pub fn shared(&self) -> refresh::Shared {
        self.shared.clone()
    }

    /// Serves and refreshes until `shutdown`, then drains in-flight requests.
    pub async fn run_until(self, shutdown: CancellationToken) -> Result<(), StatusPagesError> {
        let Self {
            settings,
            pool,
            shared,
            server,
            addr,
            mut shell,
            refreshes,
        } = self;
        let refresher = refresh::run(
            pool,
            shared,
            settings.status_pages.clone(),
            shutdown.clone(),
            refreshes,
        );
        shell.spawn("refresh", refresher);
        let handle = server.handle();
        let stop = shutdown.clone();
        shell.spawn("public server stop", async move {
            stop.cancelled().await;
            handle.stop(true).await;
        });
        tracing::info!(addr = %addr, "serving status pages");
        let serves = async { server.await.map_err(StatusPagesError::from) };
        shell.run(shutdown.clone(), serves).await
    }
}

/// The service's `main`: build, then serve until SIGTERM.
pub async fn run(
    settings: StatusPagesSettings,
    shutdown: CancellationToken,
) -> Result<(), StatusPagesError> {
    StatusPages::build(settings)
        .await?
        .run_until(shutdown)
        .await
}
