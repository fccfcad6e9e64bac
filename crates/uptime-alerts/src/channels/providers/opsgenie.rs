//! Opsgenie Alert API: `POST {base}/v2/alerts` creates an alert under our
//! incident key as its `alias` (Opsgenie keeps one open alert per alias and
//! counts repeats on it), `POST {base}/v2/alerts/{alias}/close?identifierType=alias`
//! closes it, and `POST {base}/v2/alerts/{alias}/acknowledge?identifierType=alias`
//! acknowledges it when the incident is acknowledged in our API. All
//! authenticate with `Authorization: GenieKey <API key>` and
//! are answered `202 Accepted` (Opsgenie processes them asynchronously).
//! The base is the US or EU instance, by the contact's `region`.

use super::{cut, join, source, OpsgenieRegion, ProviderRequest, Target};
use crate::error::SendError;
use crate::event::{AcknowledgeRequest, AlertEvent, EventType};
use crate::incident::{dedup_key_for, severity_of, Severity};
use serde_json::{json, Map, Value};

/// Documented limits of the create request's fields.
const MAX_MESSAGE_CHARS: usize = 130;
const MAX_DESCRIPTION_CHARS: usize = 15_000;
const MAX_ENTITY_CHARS: usize = 512;
const MAX_SOURCE_CHARS: usize = 100;
const MAX_DETAIL_VALUE_CHARS: usize = 8_000;
/// The acknowledge request's `note`.
const MAX_NOTE_CHARS: usize = 25_000;
/// What our requests name as their source.
const OUR_SOURCE: &str = "Uptime";

/// Opsgenie's instance for the contact's `region`.
fn base_url<'a>(to: &Target<'a>) -> &'a str {
    match to.options.region.unwrap_or(OpsgenieRegion::Us) {
        OpsgenieRegion::Us => &to.urls.opsgenie_us_url,
        OpsgenieRegion::Eu => &to.urls.opsgenie_eu_url,
    }
}

/// Acknowledges the alert of `request`'s incident (its alias is the
/// incident id: hex digits and '-', nothing to escape in the path).
pub(crate) fn acknowledge(
    request: &AcknowledgeRequest,
    to: Target<'_>,
) -> Result<Vec<ProviderRequest>, SendError> {
    let api_key = to.secret("API key")?;
    let path = format!(
        "/v2/alerts/{}/acknowledge?identifierType=alias",
        request.incident_id
    );
    Ok(vec![ProviderRequest {
        url: join(base_url(&to), &path),
        headers: vec![("authorization", format!("GenieKey {api_key}"))],
        body: json!({
            "source": OUR_SOURCE,
            "note": cut(&crate::render::acknowledge_note(request), MAX_NOTE_CHARS),
        }),
    }])
}

pub(crate) fn render(
    event: &AlertEvent,
    to: Target<'_>,
) -> Result<Vec<ProviderRequest>, SendError> {
    let api_key = to.secret("API key")?;
    let base = base_url(&to);
    let authorized = |url: String, body: Value| ProviderRequest {
        url,
        headers: vec![("authorization", format!("GenieKey {api_key}"))],
        body,
    };
    let close = |alias: &str| {
        // Our keys are letters, digits and '-', so the alias needs no
        // escaping in the path.
        authorized(
            join(
                base,
                &format!("/v2/alerts/{alias}/close?identifierType=alias"),
            ),
            json!({"source": OUR_SOURCE, "note": crate::render::headline(event)}),
        )
    };
    let keys = dedup_key_for(event);
    let mut requests = Vec::new();
    if event.event == EventType::Test {
        if let Some(alias) = &keys.opens {
            requests.push(authorized(join(base, "/v2/alerts"), create(event, alias)));
            requests.push(close(alias));
        }
        return Ok(requests);
    }
    if let Some(alias) = &keys.closes {
        requests.push(close(alias));
    }
    if let Some(alias) = &keys.opens {
        requests.push(authorized(join(base, "/v2/alerts"), create(event, alias)));
    }
    Ok(requests)
}

fn create(event: &AlertEvent, alias: &str) -> Value {
    let priority = match severity_of(event) {
        Severity::Critical => "P1",
        Severity::Warning => "P3",
        Severity::Info => "P5",
    };
    let details: Map<String, Value> = crate::render::facts(event)
        .into_iter()
        .map(|(label, value)| {
            (
                label.to_string(),
                json!(cut(&value, MAX_DETAIL_VALUE_CHARS)),
            )
        })
        .collect();
    let mut description = crate::render::summary(event);
    for (label, value) in crate::render::facts(event) {
        description.push_str(&format!("\n{label}: {value}"));
    }
    json!({
        "message": cut(&crate::render::headline(event), MAX_MESSAGE_CHARS),
        "alias": alias,
        "description": cut(&description, MAX_DESCRIPTION_CHARS),
        "entity": cut(&source(event), MAX_ENTITY_CHARS),
        "source": cut(OUR_SOURCE, MAX_SOURCE_CHARS),
        "priority": priority,
        "tags": ["uptime", event.event.as_str()],
        "details": details,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channels::providers::ProviderOptions;
    use crate::incident::tests::{change, t, with_incident};
    use uptime_config::AlertProviderSettings;
    use uptime_contracts::MonitorStatus::*;

    #[test]
    fn an_outage_is_created_and_closed_by_alias_on_the_contacts_instance() {
        let urls = AlertProviderSettings::default();
        let options = ProviderOptions {
            region: Some(OpsgenieRegion::Eu),
            server: None,
        };
        let to = Target {
            value: "",
            secret: Some("0psg3n1e-key"),
            options: &options,
            urls: &urls,
        };
        let down = render(&change(Up, Down, t(0), t(60)), to).unwrap();
        assert_eq!(down.len(), 1);
        assert_eq!(down[0].url, "https://api.eu.opsgenie.com/v2/alerts");
        assert_eq!(
            down[0].headers,
            [("authorization", "GenieKey 0psg3n1e-key".to_string())]
        );
        let body = &down[0].body;
        assert_eq!(body["priority"], "P1");
        assert!(body["message"].as_str().unwrap().chars().count() <= MAX_MESSAGE_CHARS);
        let alias = body["alias"].as_str().unwrap();
        let up = render(&change(Down, Up, t(60), t(300)), to).unwrap();
        assert_eq!(up.len(), 1);
        assert_eq!(
            up[0].url,
            format!("https://api.eu.opsgenie.com/v2/alerts/{alias}/close?identifierType=alias")
        );
        let us = ProviderOptions::default();
        let degraded = render(
            &change(Up, Degraded, t(0), t(1)),
            Target { options: &us, ..to },
        )
        .unwrap();
        assert_eq!(degraded[0].url, "https://api.opsgenie.com/v2/alerts");
        assert_eq!(degraded[0].body["priority"], "P3");
    }

    #[test]
    fn the_incident_id_is_the_alias_and_is_acknowledged_by_it() {
        let urls = AlertProviderSettings::all_at("http://og.test");
        let options = ProviderOptions::default();
        let to = Target {
            value: "",
            secret: Some("k3y"),
            options: &options,
            urls: &urls,
        };
        let incident = uuid::Uuid::from_u128(0xfeed);
        let down = with_incident(change(Up, Down, t(0), t(60)), incident);
        assert_eq!(
            render(&down, to).unwrap()[0].body["alias"],
            incident.to_string()
        );
        let request = AcknowledgeRequest {
            incident_id: incident,
            monitor_id: 42,
            acknowledged_at: t(70),
            acknowledged_via: "link".into(),
        };
        let ack = acknowledge(&request, to).unwrap();
        assert_eq!(
            ack[0].url,
            format!("http://og.test/v2/alerts/{incident}/acknowledge?identifierType=alias")
        );
        assert_eq!(
            ack[0].headers,
            [("authorization", "GenieKey k3y".to_string())]
        );
        assert_eq!(ack[0].body["source"], "Uptime");
        assert!(ack[0].body["note"]
            .as_str()
            .unwrap()
            .contains("the link in an alert"));
    }

    #[test]
    fn a_long_name_is_cut_to_the_message_limit() {
        let urls = AlertProviderSettings::default();
        let options = ProviderOptions::default();
        let mut down = change(Up, Down, t(0), t(60));
        down.monitor.as_mut().unwrap().name = "n".repeat(400);
        let to = Target {
            value: "",
            secret: Some("k"),
            options: &options,
            urls: &urls,
        };
        let body = &render(&down, to).unwrap()[0].body;
        assert_eq!(
            body["message"].as_str().unwrap().chars().count(),
            MAX_MESSAGE_CHARS
        );
    }
}
