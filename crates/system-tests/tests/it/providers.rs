//! Each alert provider end to end: a monitor alerting a provider contact
//! goes down and recovers; the provider (a loopback receiver that checks
//! its documented format) gets one well-formed alert that opens our
//! incident, then one that closes the same incident (on-call providers:
//! trigger and resolve under one key; chat providers: a down message, then
//! an up message).

use crate::common::{check_now, wait_status};
use crate::provider_receiver::{Provider, ProviderReceiver, Taken};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use std::time::Duration;
use system_tests::{Stack, StackOptions};
use uptime_testkit::target::TargetServer;

/// The contact body for `provider`, its endpoints at `base`.
fn contact(provider: Provider, base: &str) -> Value {
    match provider {
        Provider::PagerDuty => {
            json!({"name": "pd", "type": "pagerduty", "secret": "R0UT1NGKEY0123456789abcdefABCDEF"})
        }
        Provider::Opsgenie => {
            json!({"name": "og", "type": "opsgenie", "secret": "4f1e2d3c-0000-1111-2222-333344445555", "region": "eu"})
        }
        Provider::Teams => json!({"name": "teams", "type": "teams",
            "value": format!("{base}/workflows/abc/triggers/manual/paths/invoke?sig=s1g")}),
        Provider::Discord => json!({"name": "discord", "type": "discord",
            "value": format!("{base}/api/webhooks/123456/t0ken")}),
        Provider::Telegram => json!({"name": "tg", "type": "telegram",
            "value": "-1001234567890", "secret": "123456:TEST-token_x"}),
        Provider::Ntfy => json!({"name": "ntfy", "type": "ntfy", "value": "shop-alerts",
            "server": base, "secret": "tk_testtoken"}),
        Provider::Pushover => json!({"name": "po", "type": "pushover",
            "value": "uQiRzpo4DXghDmr9QzzfQu27cmVRsG", "secret": "azGDORePK8gMaC0QOYAMyEEuzJnyUi"}),
    }
}

/// Which incident a request opens or closes, as (opens, key); `None` for a
/// request about something else (the first `pending → up`).
fn incident_step(provider: Provider, t: &Taken) -> Option<(bool, String)> {
    let b = &t.body;
    let says = |text: &str| {
        if text.contains("[DOWN]") {
            Some((true, String::new()))
        } else if text.contains("[UP]") {
            Some((false, String::new()))
        } else {
            None
        }
    };
    match provider {
        Provider::PagerDuty => Some((
            b["event_action"] == "trigger",
            b["dedup_key"].as_str()?.to_string(),
        )),
        Provider::Opsgenie => match t.path.strip_suffix("/close?identifierType=alias") {
            Some(path) => Some((false, path.strip_prefix("/v2/alerts/")?.to_string())),
            None => Some((true, b["alias"].as_str()?.to_string())),
        },
        Provider::Teams => says(
            b["attachments"][0]["content"]["body"][0]["text"]
                .as_str()?
                .replace('\\', "")
                .as_str(),
        ),
        Provider::Discord => says(b["embeds"][0]["title"].as_str()?),
        Provider::Telegram => says(b["text"].as_str()?),
        Provider::Ntfy | Provider::Pushover => says(b["title"].as_str()?),
    }
}

/// The incident steps of `taken` from the first that opens one (chat
/// providers are also told of the monitor's first `pending → up`, which
/// closes nothing).
fn steps_from_first_open(provider: Provider, taken: &[Taken]) -> Vec<(bool, String)> {
    taken
        .iter()
        .filter_map(|t| incident_step(provider, t))
        .skip_while(|(opens, _)| !*opens)
        .collect()
}

async fn an_outage_opens_and_closes_one_incident(provider: Provider) {
    let receiver = ProviderReceiver::start(provider).await;
    let options = StackOptions {
        alert_providers: uptime_config::AlertProviderSettings::all_at(&receiver.base),
        ..StackOptions::default()
    };
    let stack = Stack::start(options).await.unwrap();
    let target = TargetServer::start().await;
    let key = stack.new_user("ops").await.unwrap();
    let (s, contact) = stack
        .call(
            Method::POST,
            "/api/v1/alert-contacts",
            &key,
            Some(contact(provider, &receiver.base)),
        )
        .await
        .unwrap();
    assert_eq!(s, StatusCode::CREATED, "{contact}");
    assert_eq!(contact["verified"], true);
    if contact.get("secret").is_some() {
        assert_eq!(contact["secret"], "set", "{contact}");
    }
    let (s, m) = stack
        .call(
            Method::POST,
            "/api/v1/monitors",
            &key,
            Some(json!({"name": "shop <main> & co", "type": "http", "target": target.url("/"),
                "interval_secs": 3600, "confirmation_count": 1, "alert_contact_ids": [contact["id"]]})),
        )
        .await
        .unwrap();
    assert_eq!(s, StatusCode::CREATED, "{m}");
    let id = m["id"].as_i64().unwrap();
    wait_status(&stack, &key, id, "up").await;
    target.set_status(503);
    check_now(&stack, &key, id).await;
    wait_status(&stack, &key, id, "down").await;
    let opened = stack
        .eventually(Duration::from_secs(30), || async {
            receiver
                .accepted()
                .iter()
                .filter_map(|t| incident_step(provider, t))
                .find(|(opens, _)| *opens)
        })
        .await
        .unwrap_or_else(|| {
            panic!(
                "no trigger: {:?} refused {:?}",
                receiver.accepted(),
                receiver.refused()
            )
        });
    target.set_status(200);
    check_now(&stack, &key, id).await;
    wait_status(&stack, &key, id, "up").await;
    let closed = stack
        .eventually(Duration::from_secs(30), || async {
            steps_from_first_open(provider, &receiver.accepted())
                .into_iter()
                .find(|(opens, _)| !*opens)
        })
        .await
        .unwrap_or_else(|| {
            panic!(
                "no resolve: {:?} refused {:?}",
                receiver.accepted(),
                receiver.refused()
            )
        });
    // On-call providers: the resolve names the trigger's key, which is our
    // incident's id.
    assert_eq!(closed.1, opened.1, "{:?}", receiver.accepted());
    if matches!(provider, Provider::PagerDuty | Provider::Opsgenie) {
        let (s, incidents) = stack
            .call(
                Method::GET,
                &format!("/api/v1/incidents?monitor_id={id}"),
                &key,
                None,
            )
            .await
            .unwrap();
        assert_eq!(s, StatusCode::OK, "{incidents}");
        assert_eq!(opened.1, incidents["incidents"][0]["id"], "{incidents}");
    }
    // A contact's deliveries go out in order, so a repeat of the trigger
    // would have come before the resolve.
    let steps: Vec<bool> = steps_from_first_open(provider, &receiver.accepted())
        .into_iter()
        .map(|(opens, _)| opens)
        .collect();
    assert_eq!(
        steps,
        [true, false],
        "exactly once per step: {:?}",
        receiver.accepted()
    );
    assert!(receiver.refused().is_empty(), "{:?}", receiver.refused());
}

#[tokio::test]
async fn pagerduty_triggers_and_resolves_one_incident() {
    an_outage_opens_and_closes_one_incident(Provider::PagerDuty).await;
}

#[tokio::test]
async fn opsgenie_creates_and_closes_one_alert_by_alias() {
    an_outage_opens_and_closes_one_incident(Provider::Opsgenie).await;
}

#[tokio::test]
async fn teams_gets_a_down_and_an_up_card() {
    an_outage_opens_and_closes_one_incident(Provider::Teams).await;
}

#[tokio::test]
async fn discord_gets_a_down_and_an_up_embed() {
    an_outage_opens_and_closes_one_incident(Provider::Discord).await;
}

#[tokio::test]
async fn telegram_gets_a_down_and_an_up_message() {
    an_outage_opens_and_closes_one_incident(Provider::Telegram).await;
}

#[tokio::test]
async fn ntfy_gets_a_down_and_an_up_message() {
    an_outage_opens_and_closes_one_incident(Provider::Ntfy).await;
}

#[tokio::test]
async fn pushover_gets_a_down_and_an_up_message() {
    an_outage_opens_and_closes_one_incident(Provider::Pushover).await;
}
