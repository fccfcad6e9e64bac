//! ntfy: a JSON publish, `POST {server}/` with `{"topic", "title",
//! "message", "priority", "tags"}`, to the contact's server (self-hosted
//! ones are common) or `alert_providers.ntfy_url`; an access token, when the
//! contact has one, goes as `Authorization: Bearer`. Priority and tags by
//! state: an outage is urgent (5), a recovery default (3).

use super::{cut_bytes, shown, target_link, ProviderRequest, Shown, Target};
use crate::error::SendError;
use crate::event::AlertEvent;
use serde_json::json;

/// ntfy's default message size limit (bytes); longer ones become attachments.
const MAX_MESSAGE_BYTES: usize = 4096;
const MAX_TITLE_BYTES: usize = 250;

pub(crate) fn render(
    event: &AlertEvent,
    to: Target<'_>,
) -> Result<Vec<ProviderRequest>, SendError> {
    let server = to.options.server.as_deref().unwrap_or(&to.urls.ntfy_url);
    let (priority, tag) = match shown(event) {
        Shown::Down => (5, "rotating_light"),
        Shown::Degraded => (4, "warning"),
        Shown::Certificate => (4, "lock"),
        Shown::Up => (3, "white_check_mark"),
        Shown::Test => (3, "test_tube"),
    };
    let mut message = crate::render::summary(event);
    for line in super::fact_lines(event) {
        message.push('\n');
        message.push_str(&line);
    }
    let mut body = json!({
        "topic": to.value,
        "title": cut_bytes(&crate::render::headline(event), MAX_TITLE_BYTES),
        "message": cut_bytes(&message, MAX_MESSAGE_BYTES),
        "priority": priority,
        "tags": [tag, "uptime"],
    });
    if let Some(link) = target_link(event) {
        body["click"] = json!(link);
    }
    let headers = match to.secret.filter(|s| !s.is_empty()) {
        Some(token) => vec![("authorization", format!("Bearer {token}"))],
        None => Vec::new(),
    };
    Ok(vec![ProviderRequest {
        url: super::join(server, "/"),
        headers,
        body,
    }])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channels::providers::ProviderOptions;
    use crate::incident::tests::{change, t};
    use uptime_config::AlertProviderSettings;
    use uptime_contracts::MonitorStatus::*;

    #[test]
    fn published_to_the_contacts_server_with_priority_by_state() {
        let urls = AlertProviderSettings::default();
        let own = ProviderOptions {
            region: None,
            server: Some("https://ntfy.example.org".into()),
        };
        let to = Target {
            value: "shop-alerts",
            secret: Some("tk_abc"),
            options: &own,
            urls: &urls,
        };
        let down = render(&change(Up, Down, t(0), t(60)), to).unwrap();
        assert_eq!(down[0].url, "https://ntfy.example.org/");
        assert_eq!(
            down[0].headers,
            [("authorization", "Bearer tk_abc".to_string())]
        );
        assert_eq!(down[0].body["topic"], "shop-alerts");
        assert_eq!(down[0].body["priority"], 5);
        assert_eq!(down[0].body["tags"][0], "rotating_light");
        let default = ProviderOptions::default();
        let up = render(
            &change(Down, Up, t(0), t(60)),
            Target {
                options: &default,
                secret: None,
                ..to
            },
        )
        .unwrap();
        assert_eq!(up[0].url, "https://ntfy.sh/");
        assert!(up[0].headers.is_empty());
        assert_eq!(up[0].body["priority"], 3);
    }
}
