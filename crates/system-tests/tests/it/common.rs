//! What the end-to-end tests share: a webhook receiver and calls on a
//! monitor through the API.

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use reqwest::{Method, StatusCode};
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use system_tests::Stack;

/// A webhook receiver that keeps every request body it gets.
pub struct Receiver {
    pub url: String,
    pub bodies: Arc<Mutex<Vec<Value>>>,
    _server: actix_web::dev::ServerHandle,
}

impl Receiver {
    pub async fn start() -> Self {
        let bodies: Arc<Mutex<Vec<Value>>> = Arc::default();
        let shared = bodies.clone();
        let server = HttpServer::new(move || {
            let shared = shared.clone();
            App::new().default_service(web::to(move |_req: HttpRequest, body: web::Bytes| {
                let shared = shared.clone();
                async move {
                    if let Ok(v) = serde_json::from_slice::<Value>(&body) {
                        shared.lock().unwrap().push(v);
                    }
                    HttpResponse::Ok().finish()
                }
            }))
        })
        .workers(1)
        .disable_signals()
        .bind("127.0.0.1:0")
        .unwrap();
        let url = format!("http://{}/hook", server.addrs()[0]);
        let server = server.run();
        let handle = server.handle();
        tokio::spawn(server);
        Self {
            url,
            bodies,
            _server: handle,
        }
    }

    pub fn events(&self) -> Vec<String> {
        self.bodies
            .lock()
            .unwrap()
            .iter()
            .map(|b| b["event"].as_str().unwrap_or("").to_string())
            .collect()
    }

    /// The events received about monitor `id`, in arrival order.
    pub fn events_of(&self, id: i64) -> Vec<String> {
        self.bodies
            .lock()
            .unwrap()
            .iter()
            .filter(|b| b["monitor"]["id"] == id)
            .map(|b| b["event"].as_str().unwrap_or("").to_string())
            .collect()
    }
}

/// Raises one more alert to `contact` (a new monitor of its own, checked at
/// once, going from pending to up) and waits for it at `receiver`: once it is
/// there, so is every alert raised for the contact before this was called,
/// duplicates included, however slow the machine. Because:
///
/// - the recorder's outbox holds no unpublished event before the marker
///   monitor exists, so every event written so far is in the events stream
///   ahead of the marker's;
/// - the notifier stores deliveries batch after batch in stream order,
///   numbering them (`seq`) as it goes, so the marker's delivery comes after
///   every delivery made of an earlier event;
/// - a contact's deliveries go out in that order, each only once the older
///   ones are settled (delivered or given up), and the receiver records a
///   request before answering it.
///
/// Returns the marker monitor's id (its own alerts are at the receiver too).
pub async fn marker_alert(stack: &Stack, key: &str, contact: &Value, receiver: &Receiver) -> i64 {
    outbox_published(stack).await;
    let target = uptime_testkit::target::TargetServer::start().await;
    let (s, m) = stack
        .call(
            Method::POST,
            "/api/v1/monitors",
            key,
            Some(
                serde_json::json!({"name": "marker", "type": "http", "target": target.url("/"),
                "interval_secs": 3600, "alert_contact_ids": [contact["id"]]}),
            ),
        )
        .await
        .unwrap();
    assert_eq!(s, StatusCode::CREATED, "{m}");
    let marker = m["id"].as_i64().unwrap();
    stack
        .eventually(Duration::from_secs(30), || async {
            receiver
                .events_of(marker)
                .contains(&"monitor.up".to_string())
                .then_some(())
        })
        .await
        .unwrap_or_else(|| panic!("no marker alert: {:?}", receiver.events()));
    marker
}

/// Waits until the recorder has published every event in its outbox.
pub async fn outbox_published(stack: &Stack) {
    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;
    use uptime_db::schema::outbox_events;
    stack
        .eventually(Duration::from_secs(15), || async {
            let mut conn = uptime_db::pool::conn(&stack.env.db.pool).await.unwrap();
            let unpublished: i64 = outbox_events::table
                .filter(outbox_events::published_at.is_null())
                .count()
                .get_result(&mut conn)
                .await
                .unwrap();
            (unpublished == 0).then_some(())
        })
        .await
        .expect("the recorder publishes its outbox");
}

pub async fn monitor(stack: &Stack, key: &str, id: i64) -> Value {
    stack
        .call(Method::GET, &format!("/api/v1/monitors/{id}"), key, None)
        .await
        .unwrap()
        .1
}

pub async fn wait_status(stack: &Stack, key: &str, id: i64, status: &str) -> Value {
    match stack
        .eventually(Duration::from_secs(15), || async {
            let m = monitor(stack, key, id).await;
            (m["status"] == status).then_some(m)
        })
        .await
    {
        Some(m) => m,
        // Read the last state before panicking: blocking on a request inside
        // the test's runtime would hang instead of failing.
        None => {
            let last = monitor(stack, key, id).await;
            panic!("monitor {id} never became {status}: {last}")
        }
    }
}

pub async fn check_now(stack: &Stack, key: &str, id: i64) -> String {
    let (status, body) = stack
        .call(
            Method::POST,
            &format!("/api/v1/monitors/{id}/check"),
            key,
            None,
        )
        .await
        .unwrap();
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    assert_eq!(body["status"], "queued");
    body["check_id"]
        .as_str()
        .expect("check_id in the 202")
        .to_string()
}

pub async fn results(stack: &Stack, key: &str, id: i64) -> Vec<Value> {
    let (_, body) = stack
        .call(
            Method::GET,
            &format!("/api/v1/monitors/{id}/results?limit=100"),
            key,
            None,
        )
        .await
        .unwrap();
    body["results"].as_array().cloned().unwrap_or_default()
}

/// Creates a webhook contact to `url`, asserting the 201; the contact.
pub async fn webhook_contact(stack: &Stack, key: &str, url: &str) -> Value {
    let (s, contact) = stack
        .call(
            Method::POST,
            "/api/v1/alert-contacts",
            key,
            Some(serde_json::json!({"name": "hook", "type": "webhook", "value": url})),
        )
        .await
        .unwrap();
    assert_eq!(s, StatusCode::CREATED, "{contact}");
    contact
}
