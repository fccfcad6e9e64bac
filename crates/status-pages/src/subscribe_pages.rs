//! The small pages of the subscription routes: plain HTML in the status
//! page's style, with a button where a click must be a `POST` (confirm,
//! unsubscribe), so that a link opened by a mail scanner changes nothing.

use crate::render::escape;
use crate::render::page::STYLE;

fn shell(title: &str, inner: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <meta name=\"robots\" content=\"noindex\">\
         <title>{}</title><style>{STYLE}</style></head><body><main>{inner}</main></body></html>",
        escape(title)
    )
}

/// A heading and a sentence.
pub fn message(title: &str, text: &str) -> String {
    shell(
        title,
        &format!(
            "<h1>{}</h1><p class=\"muted\" id=\"message\">{}</p>",
            escape(title),
            escape(text)
        ),
    )
}

/// A heading, a sentence and a button that posts to `action`.
pub fn button(title: &str, text: &str, action: &str, label: &str) -> String {
    shell(
        title,
        &format!(
            "<h1>{}</h1><p class=\"muted\">{}</p><form method=\"post\" action=\"{}\">\
             <button type=\"submit\">{}</button></form>",
            escape(title),
            escape(text),
            escape(action),
            escape(label)
        ),
    )
}

/// After a subscribe request (the same whether the address was new).
pub fn check_inbox(page_title: &str) -> String {
    message(
        "Check your inbox",
        &format!(
            "Unless the address is subscribed already, a mail with a link to confirm your \
             subscription to \u{201c}{page_title}\u{201d} is on its way. Nothing is sent \
             before you confirm."
        ),
    )
}

/// A refused subscribe request.
pub fn refused(page_title: &str, reason: &str) -> String {
    message(&format!("Not subscribed to {page_title}"), reason)
}

/// A confirm or unsubscribe link that is malformed, used, or expired.
pub fn unknown_link() -> String {
    message(
        "Link not valid",
        "This link is unknown, was used already, or has expired. Subscribe again from the status page.",
    )
}
