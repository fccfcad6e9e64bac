//! Spans: a message's span continues its publisher's trace; a batch's span
//! links every message's trace.

use crate::Harness;
use async_nats::HeaderMap;
use opentelemetry::trace::{TraceId, TracerProvider as _};
use opentelemetry_sdk::export::trace::SpanData;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tracing_subscriber::layer::SubscriberExt;
use uptime_consumer::{Batching, Concurrency};

/// Keeps every finished span.
#[derive(Debug, Clone, Default)]
struct Collected(Arc<Mutex<Vec<SpanData>>>);

impl opentelemetry_sdk::trace::SpanProcessor for Collected {
    fn on_start(&self, _: &mut opentelemetry_sdk::trace::Span, _: &opentelemetry::Context) {}
    fn on_end(&self, span: SpanData) {
        self.0.lock().unwrap().push(span);
    }
    fn force_flush(&self) -> opentelemetry::trace::TraceResult<()> {
        Ok(())
    }
    fn shutdown(&self) -> opentelemetry::trace::TraceResult<()> {
        Ok(())
    }
}

/// A tracing subscriber exporting to `collected`, for this thread.
fn tracing_into(collected: &Collected) -> tracing::subscriber::DefaultGuard {
    let provider = opentelemetry_sdk::trace::TracerProvider::builder()
        .with_span_processor(collected.clone())
        .build();
    opentelemetry::global::set_text_map_propagator(
        opentelemetry_sdk::propagation::TraceContextPropagator::new(),
    );
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
    tracing::subscriber::set_default(subscriber)
}

fn traceparent(n: u8) -> (TraceId, HeaderMap) {
    let trace = format!("{:032x}", 0x1000 + n as u128);
    let mut headers = HeaderMap::new();
    headers.insert(
        "traceparent",
        format!("00-{trace}-00f067aa0ba902b7-01").as_str(),
    );
    (TraceId::from_hex(&trace).unwrap(), headers)
}

#[tokio::test]
async fn a_batch_span_links_the_trace_of_every_message() {
    let collected = Collected::default();
    let _tracing = tracing_into(&collected);
    let h = Harness::start().await;
    let mut sent = HashSet::new();
    for n in 0..3 {
        let (trace, headers) = traceparent(n);
        sent.insert(trace);
        h.publish(&format!("work.{n}"), headers, "x").await;
    }
    let consumer = h.consumer(Duration::from_secs(30), -1).await;
    let shutdown = CancellationToken::new();
    let handled = Arc::new(Mutex::new(0));
    let counted = handled.clone();
    let stop = shutdown.clone();
    consumer
        .run_batches(
            Batching {
                max_messages: 10,
                max_wait: Duration::from_millis(200),
            },
            move |batch| {
                let (counted, stop) = (counted.clone(), stop.clone());
                async move {
                    for delivery in &batch {
                        delivery.ack().await;
                    }
                    let mut handled = counted.lock().unwrap();
                    *handled += batch.len();
                    if *handled == 3 {
                        stop.cancel();
                    }
                }
            },
            shutdown,
        )
        .await;

    let spans = collected.0.lock().unwrap().clone();
    let batches: Vec<_> = spans.iter().filter(|s| s.name == "consume_batch").collect();
    assert!(!batches.is_empty(), "a batch span was recorded");
    let linked: HashSet<TraceId> = batches
        .iter()
        .flat_map(|s| s.links.iter().map(|l| l.span_context.trace_id()))
        .collect();
    assert_eq!(linked, sent, "every message's trace is linked");
}

#[tokio::test]
async fn a_message_span_continues_its_publishers_trace() {
    let collected = Collected::default();
    let _tracing = tracing_into(&collected);
    let h = Harness::start().await;
    let (trace, headers) = traceparent(7);
    h.publish("work.traced", headers, "x").await;
    let consumer = h.consumer(Duration::from_secs(30), -1).await;
    let shutdown = CancellationToken::new();
    let stop = shutdown.clone();
    let seen = Arc::new(Mutex::new(None));
    let record = seen.clone();
    consumer
        .run_each(
            Concurrency {
                max_in_flight: 1,
                shutdown_grace: Duration::from_secs(5),
            },
            move |delivery| {
                let (stop, record) = (stop.clone(), record.clone());
                async move {
                    let current = uptime_telemetry::nats::trace_id_of(&tracing::Span::current());
                    *record.lock().unwrap() = Some(current);
                    delivery.ack().await;
                    stop.cancel();
                }
            },
            shutdown,
        )
        .await;
    assert_eq!(
        seen.lock().unwrap().clone(),
        Some(trace.to_string()),
        "the handler runs in the publisher's trace"
    );
}
