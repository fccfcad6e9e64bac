//! Pushover: `POST {pushover_url}/1/messages.json` with the application's
//! token (the contact's secret) and the user or group key (its `value`);
//! answered `200` with `{"status": 1}`. Priority by state: an outage is
//! high (1, bypassing quiet hours), a recovery quiet (-1). Emergency (2)
//! is not used: it needs acknowledgement handling of its own.

use super::{cut, shown, target_link, ProviderRequest, Shown, Target};
use crate::error::SendError;
use crate::event::AlertEvent;
use serde_json::json;

/// Documented limits.
pub(crate) const MAX_MESSAGE_CHARS: usize = 1024;
pub(crate) const MAX_TITLE_CHARS: usize = 250;
const MAX_URL_CHARS: usize = 512;

pub(crate) fn render(
    event: &AlertEvent,
    to: Target<'_>,
) -> Result<Vec<ProviderRequest>, SendError> {
    let token = to.secret("application token")?;
    let priority = match shown(event) {
        Shown::Down => 1,
        Shown::Degraded | Shown::Certificate | Shown::Test => 0,
        Shown::Up => -1,
    };
    let mut message = crate::render::summary(event);
    for line in super::fact_lines(event) {
        message.push('\n');
        message.push_str(&line);
    }
    let mut body = json!({
        "token": token,
        "user": to.value,
        "title": cut(&crate::render::headline(event), MAX_TITLE_CHARS),
        "message": cut(&message, MAX_MESSAGE_CHARS),
        "priority": priority,
        "timestamp": event.occurred_at.timestamp(),
    });
    if let Some(link) = target_link(event).filter(|l| l.chars().count() <= MAX_URL_CHARS) {
        body["url"] = json!(link);
    }
    Ok(vec![ProviderRequest::post(
        super::join(&to.urls.pushover_url, "/1/messages.json"),
        body,
    )])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channels::providers::ProviderOptions;
    use crate::incident::tests::{change, t};
    use uptime_config::AlertProviderSettings;
    use uptime_contracts::MonitorStatus::*;

    #[test]
    fn priority_by_state_and_texts_within_limits() {
        let urls = AlertProviderSettings::default();
        let options = ProviderOptions::default();
        let to = Target {
            value: "uQiRzpo4DXghDmr9QzzfQu27cmVRsG",
            secret: Some("azGDORePK8gMaC0QOYAMyEEuzJnyUi"),
            options: &options,
            urls: &urls,
        };
        let mut down = change(Up, Down, t(0), t(60));
        down.check.as_mut().unwrap().error = Some("e".repeat(3000));
        let sent = render(&down, to).unwrap();
        assert_eq!(sent[0].url, "https://api.pushover.net/1/messages.json");
        let body = &sent[0].body;
        assert_eq!(body["token"], "azGDORePK8gMaC0QOYAMyEEuzJnyUi");
        assert_eq!(body["user"], "uQiRzpo4DXghDmr9QzzfQu27cmVRsG");
        assert_eq!(body["priority"], 1);
        assert_eq!(
            body["message"].as_str().unwrap().chars().count(),
            MAX_MESSAGE_CHARS
        );
        let up = render(&change(Down, Up, t(0), t(60)), to).unwrap();
        assert_eq!(up[0].body["priority"], -1);
    }
}
