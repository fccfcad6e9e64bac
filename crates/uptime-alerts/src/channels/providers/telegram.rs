//! Telegram Bot API: `POST {telegram_url}/bot<token>/sendMessage` with the
//! contact's `value` as `chat_id` (a numeric id, or `@channelname`) and the
//! text in `parse_mode: HTML`, every piece of it escaped (`&`, `<`, `>`), at
//! most 4096 characters. The bot token is in the path, so the URL is never
//! written to a log or an error. A `429` says how long to wait in
//! `parameters.retry_after`, which the retry honours.

use super::{ProviderRequest, Target};
use crate::error::SendError;
use crate::event::AlertEvent;
use serde_json::{json, Value};

/// `text`'s documented limit, counted after entities are parsed; counting
/// the escaped text keeps well inside it.
pub(crate) const MAX_TEXT_CHARS: usize = 4096;

pub(crate) fn render(
    event: &AlertEvent,
    to: Target<'_>,
) -> Result<Vec<ProviderRequest>, SendError> {
    let token = to.secret("bot token")?;
    let url = super::join(&to.urls.telegram_url, &format!("/bot{token}/sendMessage"));
    let body = json!({
        "chat_id": chat_id(to.value),
        "text": text(event),
        "parse_mode": "HTML",
        "link_preview_options": {"is_disabled": true},
    });
    Ok(vec![ProviderRequest::post(url, body)])
}

/// A numeric chat id as a number, a `@channel` as a string (the API takes both).
fn chat_id(value: &str) -> Value {
    value
        .parse::<i64>()
        .map(Value::from)
        .unwrap_or_else(|_| Value::from(value))
}

/// The headline in bold, the summary, then the facts; lines that would pass
/// the limit are left out whole, so no tag or entity is ever cut in two.
fn text(event: &AlertEvent) -> String {
    let mut text = format!(
        "<b>{}</b>\n{}",
        escape(&super::cut(&crate::render::headline(event), 1000)),
        escape(&super::cut(&crate::render::summary(event), 1000))
    );
    for (label, value) in crate::render::facts(event) {
        let line = format!("\n<b>{}:</b> {}", escape(label), escape(&value));
        if text.chars().count() + line.chars().count() > MAX_TEXT_CHARS {
            break;
        }
        text.push_str(&line);
    }
    text
}

/// The three characters the HTML parse mode requires escaped.
pub(crate) fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channels::providers::ProviderOptions;
    use crate::incident::tests::{change, t};
    use uptime_config::AlertProviderSettings;
    use uptime_contracts::MonitorStatus::*;

    #[test]
    fn html_is_escaped_and_the_text_bounded() {
        let urls = AlertProviderSettings::all_at("http://tg.test");
        let options = ProviderOptions::default();
        let to = Target {
            value: "-1001234567890",
            secret: Some("123456:ABC-DEF"),
            options: &options,
            urls: &urls,
        };
        let mut down = change(Up, Down, t(0), t(60));
        down.check.as_mut().unwrap().error = Some("<script>&".repeat(2000));
        let sent = render(&down, to).unwrap();
        assert_eq!(sent[0].url, "http://tg.test/bot123456:ABC-DEF/sendMessage");
        let body = &sent[0].body;
        assert_eq!(body["chat_id"], -1001234567890i64);
        assert_eq!(body["parse_mode"], "HTML");
        let text = body["text"].as_str().unwrap();
        assert!(
            text.starts_with("<b>[DOWN] Shop &lt;main&gt; &amp; co is down</b>\n"),
            "{text}"
        );
        assert!(text.chars().count() <= MAX_TEXT_CHARS);
        assert!(!text.contains("<script>"));
        let channel = render(
            &AlertEvent::test(t(0)),
            Target {
                value: "@ops",
                ..to
            },
        )
        .unwrap();
        assert_eq!(channel[0].body["chat_id"], "@ops");
        assert!(render(&down, Target { secret: None, ..to }).is_err());
    }
}
