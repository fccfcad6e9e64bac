//! Microsoft Teams through a Workflows (Power Automate) webhook: the
//! contact's `value` is the workflow's URL, which receives
//! `{"type": "message", "attachments": [{"contentType":
//! "application/vnd.microsoft.card.adaptive", "content": <Adaptive Card>}]}`
//! and posts the card to its channel (answered `202 Accepted`).

use super::{backslashed, cut, shown, target_link, webhook_post, ProviderRequest, Shown, Target};
use crate::error::SendError;
use crate::event::AlertEvent;
use serde_json::{json, Value};

/// Adaptive Card schema version Teams renders (1.5 on desktop and mobile).
const CARD_VERSION: &str = "1.4";
const MAX_TEXT_CHARS: usize = 2000;

pub(crate) fn render(
    event: &AlertEvent,
    to: Target<'_>,
) -> Result<Vec<ProviderRequest>, SendError> {
    webhook_post(to, message(event))
}

fn message(event: &AlertEvent) -> Value {
    // Adaptive Cards colour text by named colours only.
    let colour = match shown(event) {
        Shown::Down => "Attention",
        Shown::Up => "Good",
        Shown::Degraded | Shown::Certificate => "Warning",
        Shown::Test => "Accent",
    };
    let facts: Vec<Value> = crate::render::facts(event)
        .into_iter()
        .map(|(label, value)| json!({"title": label, "value": inert(&cut(&value, MAX_TEXT_CHARS))}))
        .collect();
    let mut card = json!({
        "type": "AdaptiveCard",
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "version": CARD_VERSION,
        "body": [
            {"type": "TextBlock", "text": inert(&cut(&crate::render::headline(event), MAX_TEXT_CHARS)),
             "weight": "Bolder", "size": "Medium", "color": colour, "wrap": true},
            {"type": "TextBlock", "text": inert(&cut(&crate::render::summary(event), MAX_TEXT_CHARS)),
             "wrap": true},
            {"type": "FactSet", "facts": facts},
        ],
    });
    if let Some(link) = target_link(event) {
        card["actions"] = json!([{"type": "Action.OpenUrl", "title": "Open target", "url": link}]);
    }
    json!({
        "type": "message",
        "attachments": [{
            "contentType": "application/vnd.microsoft.card.adaptive",
            "contentUrl": null,
            "content": card,
        }],
    })
}

/// Text blocks and facts take a subset of Markdown: brackets and the
/// emphasis marks are escaped so a monitor's name cannot make a link or
/// restyle the card.
fn inert(text: &str) -> String {
    backslashed(
        text,
        &['\\', '[', ']', '(', ')', '*', '_', '`', '#', '<', '>'],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channels::providers::testing::webhook;
    use crate::incident::tests::{change, t};
    use uptime_contracts::MonitorStatus::*;

    #[test]
    fn the_card_is_an_adaptive_card_attachment() {
        let to = webhook("https://prod.westeurope.logic.azure.com/workflows/abc/triggers/manual/paths/invoke?sig=s");
        let mut down = change(Up, Down, t(0), t(60));
        down.monitor.as_mut().unwrap().name = "[click](https://evil.example)".into();
        let sent = render(&down, to).unwrap();
        assert_eq!(sent[0].url, to.value);
        let body = &sent[0].body;
        assert_eq!(body["type"], "message");
        let attachment = &body["attachments"][0];
        assert_eq!(
            attachment["contentType"],
            "application/vnd.microsoft.card.adaptive"
        );
        let card = &attachment["content"];
        assert_eq!(card["type"], "AdaptiveCard");
        assert_eq!(card["version"], CARD_VERSION);
        assert_eq!(card["body"][0]["color"], "Attention");
        assert_eq!(
            card["body"][0]["text"],
            "\\[DOWN\\] \\[click\\]\\(https://evil.example\\) is down"
        );
        assert_eq!(card["actions"][0]["url"], "https://shop.example.com/");
        let up = render(&change(Down, Up, t(0), t(60)), to).unwrap();
        assert_eq!(
            up[0].body["attachments"][0]["content"]["body"][0]["color"],
            "Good"
        );
    }
}
