//! The new monitor kinds through the whole pipeline: created through the
//! API, scheduled, checked by the checker's probe of their kind, recorded,
//! and alerted on with the kind in the alert (issue 12).

use crate::common::{check_now, results, wait_status, webhook_contact, Receiver};
use reqwest::{Method, StatusCode};
use serde_json::json;
use std::time::Duration;
use system_tests::{Stack, StackOptions};
use tokio::net::TcpListener;

/// A TCP listener on loopback that accepts and drops connections until
/// aborted.
fn serve(listener: TcpListener) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            drop(socket);
        }
    })
}

#[tokio::test]
async fn a_tcp_monitor_is_up_while_its_port_listens_and_down_when_it_closes() {
    let stack = Stack::start(StackOptions::default()).await.unwrap();
    let receiver = Receiver::start().await;
    let key = stack.new_user("ops").await.unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = serve(listener);

    let contact = webhook_contact(&stack, &key, &receiver.url).await;
    let (s, m) = stack
        .call(
            Method::POST,
            "/api/v1/monitors",
            &key,
            Some(
                json!({"name": "db port", "type": "tcp", "target": addr.to_string(),
                        "interval_secs": 60, "timeout_secs": 2,
                        "alert_contact_ids": [contact["id"]]}),
            ),
        )
        .await
        .unwrap();
    assert_eq!(s, StatusCode::CREATED, "{m}");
    assert_eq!(m["type"], "tcp");
    let id = m["id"].as_i64().unwrap();

    // A new monitor is checked at once; a tcp result has a latency and no
    // HTTP status.
    wait_status(&stack, &key, id, "up").await;
    let first = results(&stack, &key, id).await;
    assert_eq!(first[0]["status"], "up", "{first:?}");
    assert!(first[0]["latency_ms"].is_number(), "{first:?}");
    assert!(first[0]["http_status"].is_null(), "{first:?}");

    // The port closes: the next check fails as refused, and the alert
    // names the kind.
    server.abort();
    let _ = server.await;
    check_now(&stack, &key, id).await;
    wait_status(&stack, &key, id, "down").await;
    let down = stack
        .eventually(Duration::from_secs(15), || async {
            receiver
                .bodies
                .lock()
                .unwrap()
                .iter()
                .find(|b| b["event"] == "monitor.down")
                .cloned()
        })
        .await
        .unwrap_or_else(|| panic!("alerts: {:?}", receiver.events()));
    assert_eq!(down["monitor"]["id"], id);
    assert_eq!(down["monitor"]["type"], "tcp", "{down}");
    let error = down["check"]["error"].as_str().unwrap_or_default();
    assert!(error.contains("refused"), "{down}");
}
