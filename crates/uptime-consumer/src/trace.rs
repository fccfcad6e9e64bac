//! Spans for consumed messages: one per message, parented on its
//! `traceparent`; one per batch, linked to every message's context.

use async_nats::HeaderMap;
use opentelemetry::trace::{SpanContext, TraceContextExt};
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The remote span a message's headers name, if they carry a valid one.
pub fn span_context_of(headers: Option<&HeaderMap>) -> Option<SpanContext> {
    let cx = uptime_telemetry::nats::context_of(headers?);
    let span_context = cx.span().span_context().clone();
    span_context.is_valid().then_some(span_context)
}

/// The span one message is handled in: a child of its publisher's span.
pub fn message_span(consumer: &str, delivery: &crate::Delivery) -> tracing::Span {
    let span = tracing::info_span!(
        "consume",
        consumer,
        subject = %delivery.subject(),
        stream_sequence = delivery.stream_sequence(),
        delivery = delivery.delivered(),
    );
    uptime_telemetry::nats::set_parent_from(&span, delivery.headers());
    span
}

/// The span one batch is handled in: a trace of its own, linked to the span
/// that published each message (a span has one parent, but a batch carries
/// many traces on).
pub fn batch_span(consumer: &str, deliveries: &[crate::Delivery]) -> tracing::Span {
    let span = tracing::info_span!("consume_batch", consumer, size = deliveries.len());
    for delivery in deliveries {
        if let Some(linked) = span_context_of(delivery.headers()) {
            span.add_link(linked);
        }
    }
    span
}
