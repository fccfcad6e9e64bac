//! Checks from several regions decided by quorum (issue 13), through the
//! whole pipeline: three checkers in three regions, a target that fails only
//! for the regions a test names (it tells them apart by the `User-Agent`
//! each region's checks send), rounds run on demand.

use crate::common::{check_now, marker_alert, monitor, wait_status, webhook_contact, Receiver};
use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use system_tests::{Stack, StackOptions};

const REGIONS: [&str; 3] = ["eu", "us", "ap"];

/// A target answering 503 to the checks of the regions in `failing`, 200
/// to the others.
struct RegionalTarget {
    url: String,
    failing: Arc<Mutex<HashSet<String>>>,
    _server: actix_web::dev::ServerHandle,
}

impl RegionalTarget {
    async fn start() -> Self {
        let failing: Arc<Mutex<HashSet<String>>> = Arc::default();
        let shared = failing.clone();
        let server = HttpServer::new(move || {
            let shared = shared.clone();
            App::new().default_service(web::to(move |req: HttpRequest| {
                let shared = shared.clone();
                async move {
                    let agent = req
                        .headers()
                        .get("user-agent")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or_default()
                        .to_string();
                    let fails = shared
                        .lock()
                        .unwrap()
                        .iter()
                        .any(|r| agent.contains(&format!("(region {r})")));
                    if fails {
                        HttpResponse::ServiceUnavailable().body("down here")
                    } else {
                        HttpResponse::Ok().body("ok")
                    }
                }
            }))
        })
        .workers(1)
        .disable_signals()
        .bind("127.0.0.1:0")
        .unwrap();
        let url = format!("http://{}/", server.addrs()[0]);
        let server = server.run();
        let handle = server.handle();
        tokio::spawn(server);
        Self {
            url,
            failing,
            _server: handle,
        }
    }

    fn fail_in(&self, regions: &[&str]) {
        *self.failing.lock().unwrap() = regions.iter().map(|r| r.to_string()).collect();
    }
}

async fn three_regions() -> Stack {
    Stack::start(StackOptions {
        regions: REGIONS.map(String::from).to_vec(),
        ..Default::default()
    })
    .await
    .unwrap()
}

/// A webhook contact and an http monitor of `target` checked from every
/// region, `confirmation_count` rounds to confirm: the monitor's id and the
/// contact.
async fn watched_monitor(
    stack: &Stack,
    key: &str,
    target: &str,
    hook: &str,
    confirmation: u32,
) -> (i64, Value) {
    let contact = webhook_contact(stack, key, hook).await;
    let (s, m) = stack
        .call(
            Method::POST,
            "/api/v1/monitors",
            key,
            Some(
                json!({"name": "site", "type": "http", "target": target, "interval_secs": 3600,
                        "timeout_secs": 2, "confirmation_count": confirmation,
                        "alert_contact_ids": [contact["id"]]}),
            ),
        )
        .await
        .unwrap();
    assert_eq!(s, StatusCode::CREATED, "{m}");
    let mut regions: Vec<&str> = m["regions"]
        .as_array()
        .expect("regions in the response")
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    regions.sort();
    assert_eq!(regions, ["ap", "eu", "us"], "{m}");
    assert_eq!(m["quorum"], 2, "a majority by default: {m}");
    (m["id"].as_i64().unwrap(), contact)
}

async fn rounds(stack: &Stack, key: &str, id: i64) -> Vec<Value> {
    let (s, body) = stack
        .call(
            Method::GET,
            &format!("/api/v1/monitors/{id}/rounds"),
            key,
            None,
        )
        .await
        .unwrap();
    assert_eq!(s, StatusCode::OK, "{body}");
    body["rounds"].as_array().cloned().unwrap_or_default()
}

/// Runs a round now and waits for its decision.
async fn decided_round(stack: &Stack, key: &str, id: i64) -> Value {
    let round_id = check_now(stack, key, id).await;
    stack
        .eventually(Duration::from_secs(20), || async {
            rounds(stack, key, id)
                .await
                .into_iter()
                .find(|r| r["round_id"] == round_id.as_str() && !r["decided_at"].is_null())
        })
        .await
        .unwrap_or_else(|| panic!("round {round_id} never decided"))
}

/// What `region` saw in `round`.
fn seen<'a>(round: &'a Value, region: &str) -> &'a str {
    round["regions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["region"] == region)
        .and_then(|r| r["seen"].as_str())
        .unwrap_or_else(|| panic!("{region} not in {round}"))
}

#[tokio::test]
async fn one_region_failing_is_a_regional_problem_not_an_outage() {
    let stack = three_regions().await;
    let target = RegionalTarget::start().await;
    let receiver = Receiver::start().await;
    let key = stack.new_user("ops").await.unwrap();
    let (id, contact) = watched_monitor(&stack, &key, &target.url, &receiver.url, 1).await;
    wait_status(&stack, &key, id, "up").await;

    target.fail_in(&["eu"]);
    let round = decided_round(&stack, &key, id).await;
    assert_eq!(round["verdict"], "up", "{round}");
    assert_eq!(seen(&round, "eu"), "failed", "{round}");
    assert_eq!(seen(&round, "us"), "passed", "{round}");
    assert!(
        round["note"].as_str().unwrap_or_default().contains("eu"),
        "the regional problem names its region: {round}"
    );
    let m = monitor(&stack, &key, id).await;
    assert_eq!(m["status"], "up", "{m}");
    assert_eq!(m["consecutive_failures"], 0, "{m}");

    // Every region's result is stored and says where it ran.
    let (_, body) = stack
        .call(
            Method::GET,
            &format!("/api/v1/monitors/{id}/results?region=eu"),
            &key,
            None,
        )
        .await
        .unwrap();
    let eu = body["results"].as_array().unwrap();
    assert!(
        !eu.is_empty() && eu.iter().all(|r| r["region"] == "eu"),
        "{body}"
    );
    assert!(eu.iter().any(|r| r["status"] == "down"), "{body}");

    // No alert: a later alert to the same contact has arrived, and an alert
    // this round raised would have arrived before it.
    marker_alert(&stack, &key, &contact, &receiver).await;
    assert_eq!(receiver.events_of(id), ["monitor.up"], "pending to up only");
}

#[tokio::test]
async fn two_of_three_failing_confirmed_turns_it_down_and_alerts_once_naming_both() {
    let stack = three_regions().await;
    let target = RegionalTarget::start().await;
    let receiver = Receiver::start().await;
    let key = stack.new_user("ops").await.unwrap();
    let (id, contact) = watched_monitor(&stack, &key, &target.url, &receiver.url, 2).await;
    wait_status(&stack, &key, id, "up").await;

    target.fail_in(&["eu", "us"]);
    let first = decided_round(&stack, &key, id).await;
    assert_eq!(first["verdict"], "down", "{first}");
    assert_eq!(
        monitor(&stack, &key, id).await["status"],
        "up",
        "one round is not confirmation"
    );
    decided_round(&stack, &key, id).await;
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
    let text = down.to_string();
    assert!(
        text.contains("eu") && text.contains("us"),
        "both regions named: {down}"
    );
    // Once: a later alert to the same contact has arrived, and a second
    // `monitor.down` raised before it would have arrived before it.
    marker_alert(&stack, &key, &contact, &receiver).await;
    assert_eq!(
        receiver.events_of(id),
        ["monitor.up", "monitor.down"],
        "pending to up, then down once"
    );
}

#[tokio::test]
async fn a_region_going_offline_mid_round_neither_loses_the_round_nor_fails_it() {
    let mut stack = three_regions().await;
    let target = RegionalTarget::start().await;
    let receiver = Receiver::start().await;
    let key = stack.new_user("ops").await.unwrap();
    let (id, _) = watched_monitor(&stack, &key, &target.url, &receiver.url, 1).await;
    wait_status(&stack, &key, id, "up").await;

    // The ap region's only checker dies; its check of the next round is
    // never answered.
    let ap = REGIONS.iter().position(|r| *r == "ap").unwrap();
    stack.kill_checker(ap);
    let round = decided_round(&stack, &key, id).await;
    assert_eq!(round["verdict"], "up", "{round}");
    let ap_seen = seen(&round, "ap");
    assert!(ap_seen == "offline" || ap_seen == "no_answer", "{round}");
    assert_eq!(seen(&round, "eu"), "passed", "{round}");
    assert_eq!(monitor(&stack, &key, id).await["status"], "up");
}
