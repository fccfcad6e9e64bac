//! What exists before the clock starts: the contacts (verified by
//! following the links mailed to the SMTP listener), the monitors of every
//! kind with their alert rules, the escalation policy, the status page and
//! a badge. Each is recorded in the ledger as the API answered it.

use super::api::{id_of, Api};
use super::ledger::Ledger;
use super::plan::{self, Plan};
use super::receivers::{self, Receivers};
use super::targets::{self, Targets};
use super::verdicts::alerts::{ContactFact, PolicyFact};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use std::time::Duration;

/// A contact: its name, where it receives, which kinds, least severity.
struct ContactSpec {
    name: &'static str,
    channel: Channel,
    events: Option<&'static [&'static str]>,
    min_severity: &'static str,
}

enum Channel {
    Webhook(&'static str),
    Refusing(&'static str),
    Email(&'static str),
}

const CONTACTS: &[ContactSpec] = &[
    ContactSpec {
        name: "all",
        channel: Channel::Webhook("/all"),
        events: None,
        min_severity: "info",
    },
    ContactSpec {
        name: "critical",
        channel: Channel::Webhook("/critical"),
        events: None,
        min_severity: "critical",
    },
    ContactSpec {
        name: "downs",
        channel: Channel::Webhook("/downs"),
        events: Some(&["down"]),
        min_severity: "info",
    },
    ContactSpec {
        name: "retried",
        channel: Channel::Refusing("/retried"),
        events: None,
        min_severity: "info",
    },
    ContactSpec {
        name: "ops-mail",
        channel: Channel::Email("ops@soak.test"),
        events: None,
        min_severity: "info",
    },
    ContactSpec {
        name: "recoveries-mail",
        channel: Channel::Email("recoveries@soak.test"),
        events: Some(&["up", "degraded"]),
        min_severity: "info",
    },
    ContactSpec {
        name: "oncall-first",
        channel: Channel::Webhook("/oncall-first"),
        events: None,
        min_severity: "info",
    },
    ContactSpec {
        name: "oncall-second",
        channel: Channel::Email("oncall@soak.test"),
        events: None,
        min_severity: "info",
    },
];

/// The event type of a contact's `events` entry.
pub fn event_type(kind: &str) -> &'static str {
    match kind {
        "down" => "monitor.down",
        "up" => "monitor.up",
        "degraded" => "monitor.degraded",
        _ => "ssl.expiring",
    }
}

fn severity_rank(s: &str) -> u8 {
    match s {
        "critical" => 2,
        "warning" => 1,
        _ => 0,
    }
}

/// Records a contact the API made.
pub fn record_contact(
    ledger: &mut Ledger,
    name: &'static str,
    id: i64,
    receiver: String,
    events: Option<&[&str]>,
    min_severity: &str,
) {
    ledger.contacts.insert(name, id);
    ledger.contact_facts.push(ContactFact {
        id,
        receiver,
        events: events.map(|e| e.iter().map(|k| event_type(k)).collect()),
        min_severity: severity_rank(min_severity),
    });
}

async fn contacts(api: &Api, receivers: &Receivers, ledger: &mut Ledger) -> anyhow::Result<()> {
    for spec in CONTACTS {
        let (kind, value, receiver) = match spec.channel {
            Channel::Webhook(path) => (
                "webhook",
                receivers.webhooks.url(path),
                receivers::webhook_receiver(path),
            ),
            Channel::Refusing(path) => (
                "webhook",
                receivers.refusing.url(path),
                receivers::refusing_receiver(path),
            ),
            Channel::Email(address) => (
                "email",
                address.to_string(),
                receivers::email_receiver(address),
            ),
        };
        let mut body = json!({"name": spec.name, "type": kind, "value": value, "min_severity": spec.min_severity});
        if let Some(events) = spec.events {
            body["events"] = json!(events);
        }
        let contact = api.post("/api/v1/alert-contacts", &body).await?;
        record_contact(
            ledger,
            spec.name,
            id_of(&contact)?,
            receiver,
            spec.events,
            spec.min_severity,
        );
    }
    // Email contacts receive alerts once the link mailed to them is followed.
    for spec in CONTACTS {
        let Channel::Email(address) = spec.channel else {
            continue;
        };
        let link = wait_for(Duration::from_secs(60), || {
            receivers.verification_links(address).pop()
        })
        .await
        .ok_or_else(|| anyhow::anyhow!("no verification mail reached {address}"))?;
        let (status, body) = api.get_public(&link).await?;
        anyhow::ensure!(status.is_success(), "verifying {address}: {status} {body}");
        let id = ledger.contact(spec.name);
        let contact = api.get(&format!("/api/v1/alert-contacts/{id}")).await?;
        anyhow::ensure!(
            contact["verified"] == true,
            "{address} not verified after its link: {contact}"
        );
    }
    Ok(())
}

/// Polls `probe` every 200 ms until it answers, at most `deadline`.
pub async fn wait_for<T>(deadline: Duration, mut probe: impl FnMut() -> Option<T>) -> Option<T> {
    let until = tokio::time::Instant::now() + deadline;
    loop {
        if let Some(v) = probe() {
            return Some(v);
        }
        if tokio::time::Instant::now() >= until {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The monitors, each with the names of the contacts it alerts.
fn monitors(plan: &Plan, t: &Targets) -> Vec<(&'static str, Value, &'static [&'static str])> {
    let http = |name: &str, extra: Value| {
        let mut body = json!({"name": name, "type": "http", "target": t.http(name).url("/health"), "interval_secs": 10});
        merge(&mut body, extra);
        body
    };
    let steady = |name: &str, interval: i64| json!({"name": name, "type": "http", "target": t.steady.url(&format!("/{name}")), "interval_secs": interval});
    let assertions = json!([
        {"source": "status_code", "comparison": "equals", "target": 200},
        {"source": "json_body", "property": "$.status", "comparison": "equals", "target": "ok"},
        {"source": "header", "property": "content-type", "comparison": "contains", "target": "json"},
        {"source": "response_time", "comparison": "less_than", "target": 5000},
    ]);
    let tls_target = |target: &uptime_testkit::tls_target::TlsTarget| {
        format!("127.0.0.1:{}", target.addr().port())
    };
    let _ = plan;
    vec![
        (
            "http-assert",
            {
                let mut b = steady("http-assert", 10);
                b["assertions"] = assertions.clone();
                b
            },
            &["all", "ops-mail"],
        ),
        (
            "http-flip",
            http(
                "http-flip",
                json!({"confirmation_count": 2, "assertions": assertions, "labels": {"page": "public"}}),
            ),
            &[
                "all",
                "critical",
                "downs",
                "retried",
                "ops-mail",
                "recoveries-mail",
            ],
        ),
        (
            "keyword",
            json!({"name": "keyword", "type": "keyword", "target": t.http("keyword").url("/"), "interval_secs": 10,
                   "keyword": targets::KEYWORD, "keyword_type": "contains"}),
            &["all", "downs"],
        ),
        (
            "tcp",
            json!({"name": "tcp", "type": "tcp", "target": format!("127.0.0.1:{}", t.tcp.port), "interval_secs": 10}),
            &["all"],
        ),
        (
            "tls-valid",
            json!({"name": "tls-valid", "type": "tls", "target": tls_target(&t.tls_valid), "interval_secs": 10}),
            &["all"],
        ),
        (
            "tls-expiring",
            json!({"name": "tls-expiring", "type": "tls", "target": tls_target(&t.tls_expiring), "interval_secs": 10, "ssl_warn_days": 30}),
            &["all", "critical", "ops-mail"],
        ),
        (
            "https",
            json!({"name": "https", "type": "http", "target": t.https.url("/"), "interval_secs": 10}),
            &[],
        ),
        (
            "dns",
            json!({"name": "dns", "type": "dns", "target": targets::DNS_NAME, "interval_secs": 10, "dns_record_type": "A",
                   "dns_expected": [targets::DNS_ADDRESS], "dns_server": t.dns.addr().to_string()}),
            &["all"],
        ),
        (
            "icmp",
            json!({"name": "icmp", "type": "icmp", "target": "127.0.0.1", "interval_secs": 10}),
            &["all"],
        ),
        (
            "slow",
            http("slow", json!({"latency_warn_ms": targets::LATENCY_WARN_MS})),
            &["all", "critical", "recoveries-mail"],
        ),
        (
            "silenced",
            http("silenced", json!({"labels": {"soak": "silenced"}})),
            &["all"],
        ),
        ("paused-by-window", steady("paused-by-window", 10), &[]),
        ("parent", http("parent", json!({})), &["all"]),
        // `depends_on` is filled in once the parent exists.
        (
            "child",
            http("child", json!({"confirmation_count": 2})),
            &["all"],
        ),
        (
            "reminded",
            http(
                "reminded",
                json!({"reminder_interval_secs": plan::REMINDER_SECS, "reminder_max": 1}),
            ),
            &["all", "ops-mail"],
        ),
        // Created paused and resumed once its policy is set: its first
        // alert must not race the policy (it would alert nobody).
        (
            "escalated",
            http("escalated", json!({"active": false})),
            &[],
        ),
        (
            "flapping",
            http(
                "flapping",
                json!({"flap_threshold": plan::FLAP_THRESHOLD, "flap_window_secs": plan::FLAP_WINDOW_SECS,
                                    "flap_stable_secs": plan::FLAP_STABLE_SECS}),
            ),
            &["all"],
        ),
        ("manual", steady("manual", 300), &[]),
        ("paused-by-user", steady("paused-by-user", 10), &[]),
        (
            "hb-interval",
            json!({"name": "hb-interval", "type": "heartbeat", "interval_secs": plan::HB_INTERVAL_SECS, "timeout_secs": plan::HB_GRACE_SECS}),
            &["all"],
        ),
        (
            "hb-cron",
            json!({"name": "hb-cron", "type": "heartbeat", "schedule": plan::HB_CRON, "timeout_secs": plan::HB_CRON_GRACE_SECS}),
            &["all"],
        ),
    ]
}

fn merge(body: &mut Value, extra: Value) {
    if let (Some(body), Value::Object(extra)) = (body.as_object_mut(), extra) {
        body.extend(extra);
    }
}

/// Everything before the clock starts. The status page's slug and the
/// badge's URLs are answered for the viewers.
pub async fn run(
    api: &Api,
    plan: &Plan,
    t: &Targets,
    receivers: &Receivers,
    status_pages_url: &str,
    ledger: &mut Ledger,
) -> anyhow::Result<Vec<String>> {
    t.steady
        .set_response_headers(&[("content-type", "application/json")]);
    contacts(api, receivers, ledger).await?;
    for (name, mut body, contact_names) in monitors(plan, t) {
        let contacts: Vec<i64> = contact_names.iter().map(|c| ledger.contact(c)).collect();
        if !contacts.is_empty() {
            body["alert_contact_ids"] = json!(contacts);
        }
        if name == "child" {
            body["depends_on"] = json!([ledger.monitor("parent")]);
        }
        let monitor = api.post("/api/v1/monitors", &body).await?;
        let id = ledger.created(&monitor, &contacts)?;
        ledger.monitors.insert(name, id);
        if let Some(token) = monitor["heartbeat_token"].as_str() {
            ledger.tokens.insert(name, token.to_string());
        }
    }
    // The escalation policy: the first step at once, the second after 60 s,
    // and once more from the start (repeat_count 1) unless acknowledged.
    let (first, second) = (
        ledger.contact("oncall-first"),
        ledger.contact("oncall-second"),
    );
    let policy = api
        .post(
            "/api/v1/escalation-policies",
            &json!({"name": "soak on-call", "repeat_count": 1, "steps": [
                {"contact_ids": [first], "delay_secs": plan::ESCALATION_DELAY_SECS},
                {"contact_ids": [second], "delay_secs": plan::ESCALATION_DELAY_SECS}]}),
        )
        .await?;
    let escalated = ledger.monitor("escalated");
    api.expect(
        Method::PUT,
        &format!("/api/v1/monitors/{escalated}/escalation-policy"),
        Some(&json!({"escalation_policy_id": id_of(&policy)?})),
        StatusCode::OK,
    )
    .await?;
    let paused_at = ledger.lives[&escalated].created_ms;
    let resumed = api
        .expect(
            Method::PATCH,
            &format!("/api/v1/monitors/{escalated}"),
            Some(&json!({"active": true})),
            StatusCode::OK,
        )
        .await?;
    anyhow::ensure!(resumed["active"] == true, "resuming escalated: {resumed}");
    ledger.paused(escalated, paused_at, super::ledger::now_ms());
    ledger.policies.insert(
        escalated,
        PolicyFact {
            steps: vec![
                (vec![first], plan::ESCALATION_DELAY_SECS),
                (vec![second], plan::ESCALATION_DELAY_SECS),
            ],
            repeat_count: 1,
        },
    );
    // A status page of some monitors by id and the public ones by label,
    // and a badge of one.
    let core: Vec<i64> = ["http-flip", "keyword", "tcp", "dns", "hb-interval"]
        .iter()
        .map(|n| ledger.monitor(n))
        .collect();
    let page = api
        .post(
            "/api/v1/status-pages",
            &json!({"slug": "soak", "title": "Soak", "groups": [
                {"name": "Core", "monitor_ids": core},
                {"name": "Public", "selector": {"page": "public"}}]}),
        )
        .await?;
    ledger.counts.insert("status_page_id", id_of(&page)? as u64);
    let badge = api
        .expect(
            Method::POST,
            &format!(
                "/api/v1/monitors/{}/badge-token",
                ledger.monitor("http-flip")
            ),
            None,
            StatusCode::OK,
        )
        .await?;
    let mut views = vec![
        format!("{status_pages_url}/status/soak"),
        format!("{status_pages_url}/status/soak/feed.atom"),
    ];
    for name in ["status", "uptime-24h", "shields"] {
        if let Some(url) = badge["urls"][name].as_str() {
            views.push(url.to_string());
        }
    }
    Ok(views)
}
