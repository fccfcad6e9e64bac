//! W3C trace context (`traceparent`, `tracestate`) in NATS message headers, so
//! one trace follows a check from the scheduler through the checker and the
//! recorder to the notifier.

use async_nats::HeaderMap;
use opentelemetry::propagation::{Extractor, Injector};
use tracing_opentelemetry::OpenTelemetrySpanExt;

struct HeaderInjector<'a>(&'a mut HeaderMap);

impl Injector for HeaderInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key, value.as_str());
    }
}

struct HeaderExtractor<'a>(&'a HeaderMap);

impl Extractor for HeaderExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(|v| v.as_str())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.iter().map(|(k, _)| k.as_ref()).collect()
    }
}

/// Writes the current span's trace context into `headers`.
pub fn inject_current(headers: &mut HeaderMap) {
    let cx = tracing::Span::current().context();
    opentelemetry::global::get_text_map_propagator(|p| {
        p.inject_context(&cx, &mut HeaderInjector(headers))
    });
}

/// Headers for a publish: `Nats-Msg-Id` for deduplication plus the current trace context.
pub fn headers_with_msg_id(msg_id: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(async_nats::header::NATS_MESSAGE_ID, msg_id);
    inject_current(&mut headers);
    headers
}

/// The trace context carried in `headers` (empty when they carry none).
pub fn context_of(headers: &HeaderMap) -> opentelemetry::Context {
    opentelemetry::global::get_text_map_propagator(|p| p.extract(&HeaderExtractor(headers)))
}

/// Makes `span` a child of the trace context carried in `headers`, if any.
pub fn set_parent_from(span: &tracing::Span, headers: Option<&HeaderMap>) {
    if let Some(headers) = headers {
        span.set_parent(context_of(headers));
    }
}

/// The trace id of `span` as 32 hex digits (all zeros when it has none).
pub fn trace_id_of(span: &tracing::Span) -> String {
    use opentelemetry::trace::TraceContextExt;
    span.context().span().span_context().trace_id().to_string()
}

/// Publishes `nats_consumer_pending` (messages not yet delivered) and
/// `nats_consumer_ack_pending` (delivered, not yet acked) for one durable
/// consumer every `every`, until `stop` resolves. Operators alert on the
/// first growing: it means the consumers fall behind.
pub async fn report_consumer_lag(
    js: async_nats::jetstream::Context,
    stream: &'static str,
    consumer: &'static str,
    every: std::time::Duration,
    stop: impl std::future::Future<Output = ()>,
) {
    let stream_name = stream;
    let poll = async {
        let mut ticker = tokio::time::interval(every);
        loop {
            ticker.tick().await;
            let info = async {
                let stream = js.get_stream(stream).await.ok()?;
                // How full the stream is, beside the limit that refuses
                // (work queues) or drops (feeds) past it: alert before it fills.
                let stored = stream.cached_info();
                let labels = [("stream", stream_name)];
                metrics::gauge!("nats_stream_bytes", &labels).set(stored.state.bytes as f64);
                metrics::gauge!("nats_stream_messages", &labels).set(stored.state.messages as f64);
                metrics::gauge!("nats_stream_max_bytes", &labels)
                    .set(stored.config.max_bytes as f64);
                let mut handle = stream
                    .get_consumer::<async_nats::jetstream::consumer::pull::Config>(consumer)
                    .await
                    .ok()?;
                handle.info().await.ok().cloned()
            };
            if let Some(info) = info.await {
                let labels = [("stream", stream), ("consumer", consumer)];
                metrics::gauge!("nats_consumer_pending", &labels).set(info.num_pending as f64);
                metrics::gauge!("nats_consumer_ack_pending", &labels)
                    .set(info.num_ack_pending as f64);
            }
        }
    };
    tokio::select! {
        _ = poll => {},
        _ = stop => {},
    }
}
