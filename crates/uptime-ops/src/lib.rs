//! What every service exposes to its operator, and how it stops.
//!
//! - `/healthz`: the process is alive (always 200 while it serves).
//! - `/readyz`: every dependency check passes (200) or not (503), with the
//!   result of each check in the body; with a [`Watchdog`], one of them is
//!   whether the service's loops are still going round ([`progress`]).
//! - `/metrics`: Prometheus text format.
//!
//! Every service runs an [`OpsServer`] on its `ops.listen` address, inside
//! a [`Shell`] with the tasks it runs and one way to stop ([`shell`]). The
//! api-gateway also mounts [`configure_probes`] (`/healthz` and `/readyz`,
//! never `/metrics`) into its public app, for load balancers that can only
//! reach the API port.

pub mod progress;
pub mod shell;

pub use progress::{MonotonicClock, Progress, Watchdog};
pub use shell::Shell;

use actix_web::{web, HttpResponse};
use futures::future::BoxFuture;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// A named readiness check: `Ok` when the dependency answers.
pub type Check = Arc<dyn Fn() -> BoxFuture<'static, Result<(), String>> + Send + Sync>;

/// How long a `/readyz` answer is reused: probes and load balancers poll
/// often, and each evaluation costs a query per dependency.
pub const DEFAULT_READINESS_CACHE: Duration = Duration::from_secs(1);

/// The checks behind `/readyz`. Their result is cached for a short while
/// (one second unless [`Readiness::with_cache_ttl`] says otherwise), and
/// concurrent requests share one evaluation, so a burst of probes costs one
/// `SELECT 1`, not one each.
#[derive(Clone)]
pub struct Readiness {
    checks: Vec<(&'static str, Check)>,
    ttl: Duration,
    last: Arc<tokio::sync::Mutex<Option<(Instant, bool, serde_json::Value)>>>,
}

impl Default for Readiness {
    fn default() -> Self {
        Self {
            checks: Vec::new(),
            ttl: DEFAULT_READINESS_CACHE,
            last: Arc::default(),
        }
    }
}

impl Readiness {
    pub fn new() -> Self {
        Self::default()
    }

    /// Reuse an evaluation for `ttl` (zero: evaluate on every request).
    pub fn with_cache_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// [`Readiness::evaluate`], answered from the cache while it is fresh.
    pub async fn evaluate_cached(&self) -> (bool, serde_json::Value) {
        // Held across the evaluation: concurrent callers wait for it and
        // reuse its result instead of running the checks again.
        let mut last = self.last.lock().await;
        if let Some((at, ready, body)) = last.as_ref() {
            if at.elapsed() < self.ttl {
                return (*ready, body.clone());
            }
        }
        let (ready, body) = self.evaluate().await;
        *last = Some((Instant::now(), ready, body.clone()));
        (ready, body)
    }

    pub fn with_check<F, Fut>(mut self, name: &'static str, check: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<(), String>> + Send + 'static,
    {
        self.checks
            .push((name, Arc::new(move || Box::pin(check()))));
        self
    }

    /// Ready while the client is connected to a NATS server.
    pub fn with_nats(self, client: &async_nats::Client) -> Self {
        let client = client.clone();
        self.with_check("nats", move || {
            let state = client.connection_state();
            async move {
                match state {
                    async_nats::connection::State::Connected => Ok(()),
                    other => Err(format!("NATS {other}")),
                }
            }
        })
    }

    /// Ready while every loop registered with `watchdog` makes progress
    /// (the check `progress`; its error names each stalled loop).
    pub fn with_watchdog(self, watchdog: &Watchdog) -> Self {
        let watchdog = watchdog.clone();
        self.with_check("progress", move || {
            let checked = watchdog.check();
            async move { checked }
        })
    }

    /// Runs every check; `(all passed, {name: "ok" | error})`.
    pub async fn evaluate(&self) -> (bool, serde_json::Value) {
        let results =
            futures::future::join_all(self.checks.iter().map(|(name, check)| async move {
                let outcome =
                    tokio::time::timeout(std::time::Duration::from_secs(2), check()).await;
                let outcome = outcome.unwrap_or_else(|_| Err("timed out".into()));
                (*name, outcome)
            }))
            .await;
        let ready = results.iter().all(|(_, r)| r.is_ok());
        let body = results
            .into_iter()
            .map(|(name, r)| {
                (
                    name.to_string(),
                    serde_json::Value::from(r.err().unwrap_or_else(|| "ok".into())),
                )
            })
            .collect::<serde_json::Map<_, _>>();
        (ready, serde_json::Value::Object(body))
    }
}

async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({"status": "ok"}))
}

async fn readyz(readiness: web::Data<Readiness>) -> HttpResponse {
    let (ready, checks) = readiness.evaluate_cached().await;
    let body =
        serde_json::json!({"status": if ready { "ready" } else { "not ready" }, "checks": checks});
    if ready {
        HttpResponse::Ok().json(body)
    } else {
        HttpResponse::ServiceUnavailable().json(body)
    }
}

async fn metrics() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4")
        .body(uptime_telemetry::metrics_handle().render())
}

/// Mounts `/healthz`, `/readyz` and `/metrics` into an actix app.
pub fn configure(readiness: Readiness) -> impl FnOnce(&mut web::ServiceConfig) {
    // Install the recorder now: anything recorded before it exists is lost
    // (a gauge set once at start would never show on `/metrics`).
    let _ = uptime_telemetry::metrics_handle();
    move |cfg| {
        configure_probes(readiness)(cfg);
        cfg.route("/metrics", web::get().to(metrics));
    }
}

/// Mounts `/healthz` and `/readyz` only: for a public listener, where
/// metrics do not belong. Share one [`Readiness`] (clones share its cache)
/// with the ops server so both ports cost one evaluation a second together.
pub fn configure_probes(readiness: Readiness) -> impl FnOnce(&mut web::ServiceConfig) {
    move |cfg| {
        cfg.app_data(web::Data::new(readiness))
            .route("/healthz", web::get().to(healthz))
            .route("/readyz", web::get().to(readyz));
    }
}

/// A middleware for public HTTP servers: a panic while a request is handled
/// does not end the process (see `uptime_telemetry::panics`). It unwinds
/// into actix-web's worker, which the server replaces, as it did before the
/// services exited on panics: one request's bug must not let a client stop
/// every replica. (The panic is logged and counted all the same.)
pub async fn contain_request_panics(
    req: actix_web::dev::ServiceRequest,
    next: actix_web::middleware::Next<impl actix_web::body::MessageBody>,
) -> Result<actix_web::dev::ServiceResponse<impl actix_web::body::MessageBody>, actix_web::Error> {
    uptime_telemetry::contain_async(next.call(req)).await
}

/// A bound ops server: its address, and the future that serves until `shutdown`.
pub struct OpsServer {
    pub addr: std::net::SocketAddr,
    server: actix_web::dev::Server,
}

impl OpsServer {
    /// Binds `listen` (port 0 picks a free port).
    pub fn bind(listen: &str, readiness: Readiness) -> std::io::Result<Self> {
        let server = actix_web::HttpServer::new(move || {
            actix_web::App::new().configure(configure(readiness.clone()))
        })
        .workers(1)
        .disable_signals()
        .bind(listen)?;
        let addr = server.addrs()[0];
        Ok(Self {
            addr,
            server: server.run(),
        })
    }

    /// Serves until `shutdown` is cancelled.
    pub async fn run(self, shutdown: CancellationToken) -> std::io::Result<()> {
        let handle = self.server.handle();
        tokio::spawn(async move {
            shutdown.cancelled().await;
            handle.stop(true).await;
        });
        self.server.await
    }
}

/// Resolves on SIGTERM or Ctrl-C.
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate()).expect("install SIGTERM handler");
        tokio::select! {
            _ = term.recv() => {},
            _ = tokio::signal::ctrl_c() => {},
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
    tracing::info!("shutdown signal received");
}

/// A token cancelled on SIGTERM or Ctrl-C; services stop their loops on it.
pub fn shutdown_token() -> CancellationToken {
    let token = CancellationToken::new();
    let child = token.clone();
    tokio::spawn(async move {
        shutdown_signal().await;
        child.cancel();
    });
    token
}

/// The `main` of a service whose one command is `serve` (also the default):
/// parse the command line, load the layered configuration, start telemetry
/// (and exit on any panic), run until SIGTERM. A macro, not a function, so each binary keeps its own
/// `--help` text and its `anyhow` edge (libraries here return typed errors).
///
/// `service_main!("recorder", "Uptime recorder: ...", "Record check results (the default).", RecorderSettings, recorder::run);`
/// The binary depends on clap, anyhow, tokio, uptime-config and uptime-telemetry.
#[macro_export]
macro_rules! service_main {
    ($name:literal, $about:literal, $serve_doc:literal, $settings:ty, $run:path) => {
        #[derive(clap::Parser)]
        #[command(about = $about)]
        struct Cli {
            #[command(subcommand)]
            command: Option<Command>,
        }

        #[derive(clap::Subcommand)]
        enum Command {
            #[doc = $serve_doc]
            Serve,
        }

        #[tokio::main]
        async fn main() -> anyhow::Result<()> {
            use anyhow::Context as _;
            let cli = <Cli as clap::Parser>::parse();
            let settings: $settings = uptime_config::load().context("loading configuration")?;
            match cli.command.unwrap_or(Command::Serve) {
                Command::Serve => {
                    let _telemetry = uptime_telemetry::init($name, &settings.telemetry)?;
                    // A panic in any task ends the process, logged, so that
                    // its supervisor restarts it (see `uptime_telemetry::panics`).
                    uptime_telemetry::exit_on_panic($name);
                    $run(settings, $crate::shutdown_token())
                        .await
                        .context(concat!($name, " failed"))?;
                }
            }
            Ok(())
        }
    };
}
