//! Telemetry for every service: structured logs, traces and metrics.
//!
//! - Logs: `tracing` events as JSON lines (or pretty text), filtered by
//!   `telemetry.log_level`.
//! - Traces: every process runs an OpenTelemetry tracer, so spans have trace
//!   ids that travel between services in NATS headers ([`nats`]). Spans are
//!   exported over OTLP/gRPC only when `telemetry.otlp_endpoint` is set.
//! - Metrics: the `metrics` facade with a Prometheus recorder; [`metrics_handle`]
//!   renders the text format for `/metrics`.
//! - Panics: [`exit_on_panic`] logs a panic and ends the process, so that a
//!   supervisor restarts it ([`panics`]).
//! - Recurring warnings: a [`Throttle`] lets one line through per period,
//!   with how many were held back ([`throttle`]).

pub mod nats;
pub mod panics;
pub mod throttle;

pub use panics::{contain, contain_async, exit_on_panic, PANIC_EXIT_CODE};
pub use throttle::Throttle;

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry::KeyValue;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::TracerProvider;
use opentelemetry_sdk::Resource;
use std::sync::OnceLock;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::EnvFilter;
use uptime_config::{LogFormat, TelemetrySettings};

#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    #[error("invalid log filter {0:?}: {1}")]
    Filter(String, String),
    #[error("OTLP exporter: {0}")]
    Exporter(String),
    #[error("a global subscriber is already installed")]
    AlreadyInstalled,
}

/// Flushes pending spans when dropped; keep it alive for the life of `main`.
pub struct TelemetryGuard {
    provider: TracerProvider,
}

impl Drop for TelemetryGuard {
    fn drop(&mut self) {
        for result in self.provider.force_flush() {
            if let Err(e) = result {
                eprintln!("flushing spans failed: {e}");
            }
        }
    }
}

/// The log filter of `log_level`. The NATS client logs every event at
/// `info`, one line per reconnect attempt (four a second while a server is
/// away: hundreds of lines per service in a minute's outage), so its own
/// lines start at `warn` unless `log_level` names `async_nats`; the
/// connection's loss and return are logged once each by
/// `uptime_contracts::bus::connect` instead.
pub fn log_filter(log_level: &str) -> Result<EnvFilter, TelemetryError> {
    let directives = if log_level.contains("async_nats") {
        log_level.to_string()
    } else {
        format!("{log_level},async_nats=warn")
    };
    EnvFilter::try_new(&directives)
        .map_err(|e| TelemetryError::Filter(log_level.to_string(), e.to_string()))
}

/// Installs the global logger, tracer and propagator for `service`.
pub fn init(service: &str, settings: &TelemetrySettings) -> Result<TelemetryGuard, TelemetryError> {
    let filter = log_filter(&settings.log_level)?;
    let provider = tracer_provider(service, &settings.otlp_endpoint)?;
    let otel_layer =
        tracing_opentelemetry::layer().with_tracer(provider.tracer(service.to_string()));
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    opentelemetry::global::set_tracer_provider(provider.clone());

    let registry = tracing_subscriber::registry().with(filter).with(otel_layer);
    let installed = match settings.log_format {
        LogFormat::Json => registry
            .with(
                tracing_subscriber::fmt::layer()
                    .json()
                    .flatten_event(true)
                    .with_current_span(true),
            )
            .try_init(),
        LogFormat::Pretty => registry.with(tracing_subscriber::fmt::layer()).try_init(),
    };
    installed.map_err(|_| TelemetryError::AlreadyInstalled)?;
    // The metrics recorder too, before the service records anything.
    let _ = metrics_handle();
    Ok(TelemetryGuard { provider })
}

/// A tracer provider that always samples; with an endpoint, it also exports.
pub fn tracer_provider(
    service: &str,
    otlp_endpoint: &str,
) -> Result<TracerProvider, TelemetryError> {
    let resource = Resource::new(vec![KeyValue::new("service.name", service.to_string())]);
    let mut builder = TracerProvider::builder().with_resource(resource);
    if !otlp_endpoint.is_empty() {
        use opentelemetry_otlp::WithExportConfig;
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_tonic()
            .with_endpoint(otlp_endpoint)
            .build()
            .map_err(|e| TelemetryError::Exporter(e.to_string()))?;
        builder = builder.with_batch_exporter(exporter, opentelemetry_sdk::runtime::Tokio);
    }
    Ok(builder.build())
}

/// The process-wide Prometheus recorder, installed on first use. Several
/// services may run in one test process; they share it.
pub fn metrics_handle() -> PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let recorder = PrometheusBuilder::new()
                .set_buckets(&[
                    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
                    30.0,
                ])
                .expect("static buckets are valid")
                // Batch sizes are counts, not seconds: with the buckets above
                // every batch past 30 messages would fall in `+Inf`.
                .set_buckets_for_metric(
                    Matcher::Suffix("_batch_size".into()),
                    &[1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0],
                )
                .expect("static buckets are valid")
                .build_recorder();
            let handle = recorder.handle();
            // Fails only if another recorder was installed first, in which case
            // metrics go there and this handle renders nothing: acceptable.
            let _ = metrics::set_global_recorder(recorder);
            handle
        })
        .clone()
}

#[cfg(test)]
mod tests {
    #[test]
    fn batch_sizes_get_count_buckets_and_durations_keep_seconds() {
        let handle = super::metrics_handle();
        metrics::histogram!("unit_batch_size").record(300.0);
        metrics::histogram!("unit_duration_seconds").record(0.3);
        let text = handle.render();
        assert!(
            text.contains("unit_batch_size_bucket{le=\"500\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("unit_batch_size_bucket{le=\"200\"} 0"),
            "{text}"
        );
        assert!(
            text.contains("unit_duration_seconds_bucket{le=\"0.5\"} 1"),
            "{text}"
        );
    }

    /// The targets of the events a filter lets through.
    #[derive(Clone, Default)]
    struct Seen(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

    impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Seen {
        fn on_event(
            &self,
            event: &tracing::Event<'_>,
            _: tracing_subscriber::layer::Context<'_, S>,
        ) {
            let line = format!("{} {}", event.metadata().level(), event.metadata().target());
            self.0.lock().unwrap().push(line);
        }
    }

    fn seen_through(log_level: &str) -> Vec<String> {
        use tracing_subscriber::layer::SubscriberExt;
        let seen = Seen::default();
        let subscriber = tracing_subscriber::registry()
            .with(super::log_filter(log_level).expect("a valid filter"))
            .with(seen.clone());
        tracing::subscriber::with_default(subscriber, || {
            tracing::info!(target: "async_nats", "event: client error: nats: IO error");
            tracing::warn!(target: "async_nats", "slow consumer");
            tracing::info!(target: "recorder", "stored a batch");
        });
        let lines = seen.0.lock().unwrap().clone();
        lines
    }

    #[test]
    fn the_nats_clients_reconnect_lines_are_left_out_unless_asked_for() {
        assert_eq!(
            seen_through("info"),
            ["WARN async_nats", "INFO recorder"],
            "the client's info lines (one per reconnect attempt) are left out"
        );
        assert_eq!(
            seen_through("info,async_nats=info"),
            ["INFO async_nats", "WARN async_nats", "INFO recorder"],
            "a log level naming the client is followed as given"
        );
    }
}
