//! Traces seen end to end, at an OTLP collector: the stack exports its spans
//! the way the binaries do (`uptime_telemetry::init` with an OTLP endpoint)
//! to a receiver on loopback (`uptime_testkit::otlp`), and the spans of one
//! check that turns a monitor down are found there, linked through the
//! `traceparent` the NATS messages carry:
//!
//! - the scheduler's `schedule_check` and the checker's `consume` of that
//!   due check are one trace (the checker's span is the child of the
//!   scheduler's, across NATS);
//! - the recorder's `consume_batch` is a trace of its own that links the
//!   check's (a batch carries hundreds of results on, and a span has one
//!   parent, so batches link: docs/architecture.md);
//! - the notifier's `consume_batch` that takes the state-change event links
//!   the trace the recorder published it in;
//! - a manual check: the api-gateway's `request` span and the checker's
//!   `consume` of the due check it published are one trace.
//!
//! The services share one process here, so one resource (`service.name`);
//! each span says which service made it by its name and `consumer`.

use crate::common::{check_now, wait_status, webhook_contact, Receiver};
use reqwest::{Method, StatusCode};
use serde_json::json;
use std::time::Duration;
use system_tests::{Stack, StackOptions};
use uptime_testkit::otlp::{OtlpReceiver, ReceivedSpan};
use uptime_testkit::refusing::RefusingPort;

/// Long enough for the batch exporter (5 s by default) on a slow machine;
/// the test returns as soon as the spans are there.
const EXPORT_LIMIT: Duration = Duration::from_secs(60);

fn consumer_span<'a>(
    spans: &'a [ReceivedSpan],
    name: &str,
    consumer: &str,
) -> Vec<&'a ReceivedSpan> {
    spans
        .iter()
        .filter(|s| s.name == name && s.attribute("consumer") == Some(consumer))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_check_that_turns_a_monitor_down_reaches_the_collector_as_linked_traces() {
    let otlp = OtlpReceiver::start().await;
    let settings = uptime_config::TelemetrySettings {
        otlp_endpoint: otlp.endpoint.clone(),
        log_level: "info".into(),
        ..Default::default()
    };
    let _telemetry = uptime_telemetry::init("uptime-stack", &settings)
        .expect("this test process installs the one global subscriber");

    let stack = Stack::start(StackOptions::default()).await.unwrap();
    let receiver = Receiver::start().await;
    let key = stack.new_user("traced").await.unwrap();
    let contact = webhook_contact(&stack, &key, &receiver.url).await;
    let refusing = RefusingPort::bind();
    let (s, m) = stack
        .call(
            Method::POST,
            "/api/v1/monitors",
            &key,
            Some(json!({"name": "refused", "type": "tcp", "target": format!("127.0.0.1:{}", refusing.port),
                        "interval_secs": 60, "confirmation_count": 1,
                        "alert_contact_ids": [contact["id"]]})),
        )
        .await
        .unwrap();
    assert_eq!(s, StatusCode::CREATED, "{m}");
    let id = m["id"].as_i64().unwrap();
    wait_status(&stack, &key, id, "down").await;
    stack
        .eventually(Duration::from_secs(30), || async {
            (!receiver.events_of(id).is_empty()).then_some(())
        })
        .await
        .expect("the down alert reaches the webhook");

    // Scheduler → checker: one trace.
    let monitor_id = id.to_string();
    let (scheduled, checked) = otlp
        .wait_for(EXPORT_LIMIT, |spans| {
            let scheduled = spans.iter().find(|s| {
                s.name == "schedule_check" && s.attribute("monitor_id") == Some(&monitor_id)
            })?;
            let checked = consumer_span(spans, "consume", "checker")
                .into_iter()
                .find(|s| s.trace_id == scheduled.trace_id)?;
            Some((scheduled.clone(), checked.clone()))
        })
        .await
        .unwrap_or_else(|| panic!("no scheduler → checker trace: {:#?}", otlp.spans()));
    assert!(!checked.parent_span_id.is_empty(), "{checked:?}");
    assert_ne!(checked.span_id, scheduled.span_id);

    // → recorder: its batch links the check's trace.
    let recorded = otlp
        .wait_for(EXPORT_LIMIT, |spans| {
            consumer_span(spans, "consume_batch", "recorder")
                .into_iter()
                .find(|s| {
                    s.links
                        .iter()
                        .any(|(trace, _)| *trace == scheduled.trace_id)
                })
                .cloned()
        })
        .await
        .unwrap_or_else(|| panic!("no recorder batch links the check: {:#?}", otlp.spans()));

    // → notifier: its batch links the trace the event was published in.
    otlp.wait_for(EXPORT_LIMIT, |spans| {
        consumer_span(spans, "consume_batch", "notifier")
            .into_iter()
            .find(|s| s.links.iter().any(|(trace, _)| *trace == recorded.trace_id))
            .cloned()
    })
    .await
    .unwrap_or_else(|| {
        panic!(
            "no notifier batch links the recorder's: {:#?}",
            otlp.spans()
        )
    });

    // A manual check: the api-gateway's request span → the checker.
    let check_id = check_now(&stack, &key, id).await;
    let (request, manual) = otlp
        .wait_for(EXPORT_LIMIT, |spans| {
            let checked = consumer_span(spans, "consume", "checker")
                .into_iter()
                .find(|s| {
                    spans.iter().any(|r| {
                        r.name == "request"
                            && r.attribute("route") == Some("/api/v1/monitors/{id}/check")
                            && r.trace_id == s.trace_id
                    })
                })?;
            let request = spans
                .iter()
                .find(|r| r.name == "request" && r.trace_id == checked.trace_id)?;
            Some((request.clone(), checked.clone()))
        })
        .await
        .unwrap_or_else(|| {
            panic!(
                "no api-gateway → checker trace for {check_id}: {:#?}",
                otlp.spans()
            )
        });
    assert!(
        request.parent_span_id.is_empty(),
        "the request span is the root: {request:?}"
    );
    assert_eq!(manual.trace_id, request.trace_id);
    assert!(otlp.spans().iter().all(|s| s.service == "uptime-stack"));
}
