//! The trace context survives a trip through a real NATS server: a span
//! opened by a consumer of the message belongs to the publisher's trace.

use futures::StreamExt;
use opentelemetry::trace::TracerProvider as _;
use tracing_subscriber::layer::SubscriberExt;
use uptime_testkit::TestNats;

#[tokio::test]
async fn trace_context_round_trips_through_nats_headers() {
    let provider = uptime_telemetry::tracer_provider("test", "").unwrap();
    opentelemetry::global::set_text_map_propagator(
        opentelemetry_sdk::propagation::TraceContextPropagator::new(),
    );
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
    let _guard = tracing::subscriber::set_default(subscriber);

    let nats = TestNats::start().await;
    let client = async_nats::connect(&nats.url).await.unwrap();
    let mut sub = client.subscribe("uptime.test.trace").await.unwrap();

    let publisher = tracing::info_span!("publish");
    let (sent_trace, headers) = publisher.in_scope(|| {
        (
            uptime_telemetry::nats::trace_id_of(&publisher),
            uptime_telemetry::nats::headers_with_msg_id("m-1"),
        )
    });
    assert_ne!(
        sent_trace, "00000000000000000000000000000000",
        "the publisher span has a trace id"
    );
    assert!(
        headers.get("traceparent").is_some(),
        "traceparent header set"
    );
    client
        .publish_with_headers("uptime.test.trace", headers, "x".into())
        .await
        .unwrap();
    client.flush().await.unwrap();

    let msg = sub.next().await.unwrap();
    let consumer = tracing::info_span!("consume");
    uptime_telemetry::nats::set_parent_from(&consumer, msg.headers.as_ref());
    assert_eq!(uptime_telemetry::nats::trace_id_of(&consumer), sent_trace);
    assert_eq!(
        msg.headers
            .as_ref()
            .unwrap()
            .get(async_nats::header::NATS_MESSAGE_ID)
            .unwrap()
            .as_str(),
        "m-1"
    );

    // Without headers a consumer starts a trace of its own.
    let orphan = tracing::info_span!("orphan");
    uptime_telemetry::nats::set_parent_from(&orphan, None);
    assert_ne!(uptime_telemetry::nats::trace_id_of(&orphan), sent_trace);
}
