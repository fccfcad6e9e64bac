//! Discord webhooks: the contact's `value` is the webhook's URL
//! (`https://discord.com/api/webhooks/{id}/{token}`), which takes
//! `{"embeds": [...]}` and answers `204 No Content`. One embed per alert,
//! coloured by state. Mentions are switched off (`allowed_mentions`), so a
//! monitor named `@everyone` pings nobody.

use super::{backslashed, cut, shown, target_link, webhook_post, ProviderRequest, Shown, Target};
use crate::error::SendError;
use crate::event::AlertEvent;
use serde_json::{json, Value};

/// Documented embed limits.
pub(crate) const MAX_TITLE_CHARS: usize = 256;
pub(crate) const MAX_DESCRIPTION_CHARS: usize = 4096;
const MAX_FIELDS: usize = 25;
const MAX_FIELD_NAME_CHARS: usize = 256;
const MAX_FIELD_VALUE_CHARS: usize = 1024;

pub(crate) fn render(
    event: &AlertEvent,
    to: Target<'_>,
) -> Result<Vec<ProviderRequest>, SendError> {
    webhook_post(to, message(event))
}

fn message(event: &AlertEvent) -> Value {
    let colour: u32 = match shown(event) {
        Shown::Down => 0xE0_1E_5A,
        Shown::Up => 0x2E_B6_7D,
        Shown::Degraded | Shown::Certificate => 0xEC_B2_2E,
        Shown::Test => 0x58_65_F2,
    };
    let fields: Vec<Value> = crate::render::facts(event)
        .into_iter()
        .take(MAX_FIELDS)
        .map(|(label, value)| {
            json!({"name": cut(label, MAX_FIELD_NAME_CHARS),
                   "value": cut(&inert(&value), MAX_FIELD_VALUE_CHARS),
                   "inline": false})
        })
        .collect();
    let mut embed = json!({
        "title": cut(&crate::render::headline(event), MAX_TITLE_CHARS),
        "description": cut(&inert(&crate::render::summary(event)), MAX_DESCRIPTION_CHARS),
        "color": colour,
        "timestamp": crate::render::rfc3339(event.occurred_at),
        "fields": fields,
    });
    if let Some(link) = target_link(event) {
        embed["url"] = json!(link);
    }
    json!({
        "username": "Uptime",
        "embeds": [embed],
        "allowed_mentions": {"parse": []},
    })
}

/// Markdown escaped with backslashes, so names and errors cannot format or
/// link (titles are plain text in Discord and are left alone).
fn inert(text: &str) -> String {
    backslashed(
        text,
        &[
            '\\', '*', '_', '~', '`', '|', '>', '<', '[', ']', '(', ')', '#', '-', '@',
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channels::providers::testing::webhook;
    use crate::incident::tests::{change, t};
    use uptime_contracts::MonitorStatus::*;

    #[test]
    fn one_embed_coloured_by_state_within_the_limits() {
        let to = webhook("https://discord.com/api/webhooks/1/tok");
        let mut down = change(Up, Down, t(0), t(60));
        down.monitor.as_mut().unwrap().name = format!("@everyone **{}**", "y".repeat(300));
        let sent = render(&down, to).unwrap();
        let body = &sent[0].body;
        assert_eq!(body["allowed_mentions"]["parse"], json!([]));
        let embed = &body["embeds"][0];
        assert_eq!(embed["color"], 0xE01E5A);
        assert_eq!(
            embed["title"].as_str().unwrap().chars().count(),
            MAX_TITLE_CHARS
        );
        assert!(embed["description"]
            .as_str()
            .unwrap()
            .contains("\\@everyone \\*\\*"));
        assert!(embed["fields"].as_array().unwrap().len() <= MAX_FIELDS);
        let up = render(&change(Down, Up, t(0), t(60)), to).unwrap();
        assert_eq!(up[0].body["embeds"][0]["color"], 0x2EB67D);
    }
}
