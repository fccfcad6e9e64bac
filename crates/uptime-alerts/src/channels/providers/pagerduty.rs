//! PagerDuty Events API v2: `POST {pagerduty_url}/v2/enqueue`, answered
//! `202 Accepted`. An outage is triggered under our incident key as its
//! `dedup_key` and resolved under the same key when it ends, so PagerDuty
//! keeps one incident for it; a repeated trigger or resolve of the same key
//! is taken once there (a retried delivery changes nothing). An
//! acknowledgement in our API is sent as `event_action: acknowledge` under
//! the same key ([`acknowledge`]).

use super::{cut, join, source, target_link, ProviderRequest, Target};
use crate::error::SendError;
use crate::event::{AcknowledgeRequest, AlertEvent, EventType};
use crate::incident::{dedup_key_for, severity_of, Severity};
use serde_json::{json, Map, Value};

/// `payload.summary`'s documented limit.
const MAX_SUMMARY_CHARS: usize = 1024;
/// `payload.source` and `payload.component` (the API takes up to 255).
const MAX_SOURCE_CHARS: usize = 255;

pub(crate) fn render(
    event: &AlertEvent,
    to: Target<'_>,
) -> Result<Vec<ProviderRequest>, SendError> {
    let routing_key = to.secret("routing key")?;
    let url = join(&to.urls.pagerduty_url, "/v2/enqueue");
    let keys = dedup_key_for(event);
    let resolve = |key: &str| {
        ProviderRequest::post(
            url.clone(),
            json!({"routing_key": routing_key, "event_action": "resolve", "dedup_key": key}),
        )
    };
    let mut requests = Vec::new();
    if event.event == EventType::Test {
        // A test opens an incident and resolves it at once, so nothing is
        // left open on the service.
        if let Some(key) = &keys.opens {
            requests.push(trigger(event, routing_key, key, &url));
            requests.push(resolve(key));
        }
        return Ok(requests);
    }
    if let Some(key) = &keys.closes {
        requests.push(resolve(key));
    }
    if let Some(key) = &keys.opens {
        requests.push(trigger(event, routing_key, key, &url));
    }
    Ok(requests)
}

/// Tells PagerDuty that the incident of `request` is acknowledged: its
/// escalation there stops, as ours does.
pub(crate) fn acknowledge(
    request: &AcknowledgeRequest,
    to: Target<'_>,
) -> Result<Vec<ProviderRequest>, SendError> {
    let routing_key = to.secret("routing key")?;
    Ok(vec![ProviderRequest::post(
        join(&to.urls.pagerduty_url, "/v2/enqueue"),
        json!({
            "routing_key": routing_key,
            "event_action": "acknowledge",
            "dedup_key": request.incident_id.to_string(),
        }),
    )])
}

fn trigger(event: &AlertEvent, routing_key: &str, key: &str, url: &str) -> ProviderRequest {
    let severity = match severity_of(event) {
        Severity::Critical => "critical",
        Severity::Warning => "warning",
        Severity::Info => "info",
    };
    let custom_details: Map<String, Value> = crate::render::facts(event)
        .into_iter()
        .map(|(label, value)| (label.to_string(), Value::String(value)))
        .collect();
    let mut body = json!({
        "routing_key": routing_key,
        "event_action": "trigger",
        "dedup_key": key,
        "client": "Uptime",
        "payload": {
            "summary": cut(&crate::render::headline(event), MAX_SUMMARY_CHARS),
            "source": cut(&source(event), MAX_SOURCE_CHARS),
            "severity": severity,
            "timestamp": crate::render::rfc3339(event.occurred_at),
            "class": event.event.as_str(),
            "custom_details": custom_details,
        },
    });
    if let Some(monitor) = &event.monitor {
        body["payload"]["component"] = json!(cut(&monitor.name, MAX_SOURCE_CHARS));
    }
    if let Some(link) = target_link(event) {
        body["links"] = json!([{"href": link, "text": "Monitored target"}]);
    }
    ProviderRequest::post(url.to_string(), body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channels::providers::ProviderOptions;
    use crate::incident::tests::{change, t, with_incident};
    use uptime_config::AlertProviderSettings;
    use uptime_contracts::MonitorStatus::*;

    fn target<'a>(urls: &'a AlertProviderSettings, options: &'a ProviderOptions) -> Target<'a> {
        Target {
            value: "",
            secret: Some("R0UT1NGKEY"),
            options,
            urls,
        }
    }

    #[test]
    fn an_outage_is_triggered_and_resolved_under_one_key() {
        let urls = AlertProviderSettings::all_at("http://pd.test/");
        let options = ProviderOptions::default();
        let down = render(&change(Up, Down, t(0), t(60)), target(&urls, &options)).unwrap();
        assert_eq!(down.len(), 1);
        let trigger = &down[0];
        assert_eq!(trigger.url, "http://pd.test/v2/enqueue");
        assert_eq!(trigger.body["event_action"], "trigger");
        assert_eq!(trigger.body["routing_key"], "R0UT1NGKEY");
        assert_eq!(trigger.body["payload"]["severity"], "critical");
        assert_eq!(
            trigger.body["payload"]["summary"],
            "[DOWN] Shop <main> & co is down"
        );
        assert_eq!(
            trigger.body["payload"]["source"],
            "https://shop.example.com/"
        );
        assert_eq!(
            trigger.body["links"][0]["href"],
            "https://shop.example.com/"
        );
        assert_eq!(
            trigger.body["payload"]["custom_details"]["Change"],
            "up -> down"
        );
        let up = render(&change(Down, Up, t(60), t(300)), target(&urls, &options)).unwrap();
        assert_eq!(up.len(), 1);
        assert_eq!(up[0].body["event_action"], "resolve");
        assert_eq!(up[0].body["dedup_key"], trigger.body["dedup_key"]);
        // A first check coming up opens nothing and sends nothing.
        assert!(
            render(&change(Pending, Up, t(0), t(1)), target(&urls, &options))
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn a_test_is_resolved_at_once_and_a_key_is_needed() {
        let urls = AlertProviderSettings::default();
        let options = ProviderOptions::default();
        let test = render(&AlertEvent::test(t(0)), target(&urls, &options)).unwrap();
        let actions: Vec<_> = test
            .iter()
            .map(|r| r.body["event_action"].clone())
            .collect();
        assert_eq!(actions, ["trigger", "resolve"]);
        assert_eq!(test[0].url, "https://events.pagerduty.com/v2/enqueue");
        let no_key = Target {
            secret: None,
            ..target(&urls, &options)
        };
        let err = render(&AlertEvent::test(t(0)), no_key).unwrap_err();
        assert_eq!(err.message, "the contact has no routing key");
    }

    #[test]
    fn the_incident_id_is_the_dedup_key_and_is_acknowledged_under_it() {
        let urls = AlertProviderSettings::all_at("http://pd.test/");
        let options = ProviderOptions::default();
        let incident = uuid::Uuid::from_u128(0xabc);
        let down = with_incident(change(Up, Down, t(0), t(60)), incident);
        let trigger = &render(&down, target(&urls, &options)).unwrap()[0];
        assert_eq!(trigger.body["dedup_key"], incident.to_string());
        let up = with_incident(change(Down, Up, t(60), t(90)), incident);
        let resolve = &render(&up, target(&urls, &options)).unwrap()[0];
        assert_eq!(resolve.body["dedup_key"], incident.to_string());
        let request = AcknowledgeRequest {
            incident_id: incident,
            monitor_id: 42,
            acknowledged_at: t(70),
            acknowledged_via: "api".into(),
        };
        let ack = acknowledge(&request, target(&urls, &options)).unwrap();
        assert_eq!(ack.len(), 1);
        assert_eq!(ack[0].url, "http://pd.test/v2/enqueue");
        assert_eq!(
            ack[0].body,
            serde_json::json!({"routing_key": "R0UT1NGKEY", "event_action": "acknowledge",
                "dedup_key": incident.to_string()})
        );
    }

    #[test]
    fn the_summary_keeps_to_its_limit() {
        let urls = AlertProviderSettings::default();
        let options = ProviderOptions::default();
        let mut down = change(Up, Down, t(0), t(60));
        down.monitor.as_mut().unwrap().name = "x".repeat(5000);
        let sent = render(&down, target(&urls, &options)).unwrap();
        let summary = sent[0].body["payload"]["summary"].as_str().unwrap();
        assert_eq!(summary.chars().count(), MAX_SUMMARY_CHARS);
        let component = sent[0].body["payload"]["component"].as_str().unwrap();
        assert_eq!(component.chars().count(), MAX_SOURCE_CHARS);
    }
}
