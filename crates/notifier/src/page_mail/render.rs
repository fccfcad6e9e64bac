//! What a subscriber's mail says, from its stored payload: free of I/O.
//!
//! Page and notice titles are the owner's text sent to addresses of
//! strangers, so titles are made inert ([`uptime_alerts::render::inert_line`]:
//! one line, no bidirectional overrides, bounded) before they reach a
//! subject. Every mail ends with the unsubscribe link (also in its
//! `List-Unsubscribe` header).

use serde::Deserialize;
use uptime_alerts::render::inert_line;

/// A confirmation mail's payload (written by the status-pages service).
#[derive(Debug, Deserialize)]
pub struct ConfirmationPayload {
    pub page_title: String,
    pub page_url: String,
    /// The status-pages service's public base URL.
    pub links_base: String,
    /// Present until the mail is settled.
    pub confirm_token: Option<String>,
}

/// A notice mail's payload (written by the api-gateway with the update).
#[derive(Debug, Deserialize)]
pub struct NoticePayload {
    pub page_title: String,
    pub page_url: String,
    pub links_base: String,
    pub notice_title: String,
    /// investigating, identified, monitoring or resolved.
    pub state: String,
    pub body: String,
    /// The notice's first update (else a later one).
    pub first: bool,
}

/// A mail ready to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub subject: String,
    pub body: String,
    pub unsubscribe_url: String,
}

fn base(links_base: &str) -> &str {
    links_base.trim_end_matches('/')
}

pub fn unsubscribe_url(links_base: &str, unsubscribe_token: &str) -> String {
    format!(
        "{}/subscriptions/unsubscribe?token={unsubscribe_token}",
        base(links_base)
    )
}

fn footer(body: &mut String, page_url: &str, unsubscribe: &str) {
    body.push_str(&format!(
        "\n\n--\nStatus page: {page_url}\nUnsubscribe (one click): {unsubscribe}\n"
    ));
}

/// The double opt-in mail: `None` when its token is gone (the mail was
/// settled already: nothing to send).
pub fn confirmation(p: &ConfirmationPayload, unsubscribe_token: &str) -> Option<Rendered> {
    let token = p.confirm_token.as_deref()?;
    let page = inert_line(&p.page_title);
    let unsubscribe = unsubscribe_url(&p.links_base, unsubscribe_token);
    let mut body = format!(
        "Someone, hopefully you, asked to get the notices of the status page \
         \"{page}\" at this address.\n\n\
         To confirm, open this link and press the button:\n\n{}/subscriptions/confirm?token={token}\n\n\
         If it was not you, ignore this mail: nothing more is sent unless the \
         subscription is confirmed, and it expires unconfirmed.",
        base(&p.links_base)
    );
    footer(&mut body, &p.page_url, &unsubscribe);
    Some(Rendered {
        subject: format!("Confirm your subscription to \"{page}\""),
        body,
        unsubscribe_url: unsubscribe,
    })
}

fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// A notice, or an update of one.
pub fn notice(p: &NoticePayload, unsubscribe_token: &str) -> Rendered {
    let page = inert_line(&p.page_title);
    let title = inert_line(&p.notice_title);
    let state = capitalised(&inert_line(&p.state));
    let unsubscribe = unsubscribe_url(&p.links_base, unsubscribe_token);
    let what = if p.first { "New notice" } else { "Update" };
    let mut body = format!("{what} on \"{page}\": {title}\n\n{state}: {}", p.body);
    footer(&mut body, &p.page_url, &unsubscribe);
    Rendered {
        subject: format!("[{state}] {title} ({page})"),
        body,
        unsubscribe_url: unsubscribe,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notice_says_its_state_title_and_text_and_how_to_leave() {
        let p = NoticePayload {
            page_title: "Acme\r\nBcc: x@evil.test".into(),
            page_url: "https://status.test/status/acme".into(),
            links_base: "https://status.test/".into(),
            notice_title: "Slow logins".into(),
            state: "identified".into(),
            body: "A bad deploy.\nRolling back.".into(),
            first: false,
        };
        let mail = notice(&p, "tok");
        assert_eq!(
            mail.subject,
            "[Identified] Slow logins (Acme Bcc: x@evil.test)"
        );
        assert!(!mail.subject.contains('\n'));
        assert!(mail.body.starts_with("Update on \"Acme Bcc: x@evil.test\": Slow logins\n\nIdentified: A bad deploy.\nRolling back."));
        assert_eq!(
            mail.unsubscribe_url,
            "https://status.test/subscriptions/unsubscribe?token=tok"
        );
        assert!(mail.body.contains(&mail.unsubscribe_url));
    }

    #[test]
    fn a_confirmation_carries_its_link_until_settled() {
        let mut p = ConfirmationPayload {
            page_title: "Acme".into(),
            page_url: "https://status.test/status/acme".into(),
            links_base: "https://status.test".into(),
            confirm_token: Some("abc".into()),
        };
        let mail = confirmation(&p, "tok").unwrap();
        assert!(mail
            .body
            .contains("https://status.test/subscriptions/confirm?token=abc"));
        assert!(mail
            .body
            .contains("https://status.test/subscriptions/unsubscribe?token=tok"));
        p.confirm_token = None;
        assert_eq!(confirmation(&p, "tok"), None);
    }
}
