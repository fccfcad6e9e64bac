//! The invitation email. The organisation's and the inviter's names are
//! user input sent to an address neither chose to hear from, so they are
//! made inert: one line each (a name with line breaks could forge lines of
//! the body, such as a second link, or headers in the subject), without
//! bidirectional overrides (which could show the text in another order
//! than it is) and bounded in length; and always quoted, so the reader
//! sees where the user's text ends.

use super::EmailContent;
use crate::event::InvitationRequest;

/// At most this many characters of a user-supplied name are shown.
const NAME_SHOWN_CHARS: usize = 100;

/// `text` as one inert line: control and bidirectional-formatting
/// characters become spaces, runs of spaces one, and it is cut (with `…`)
/// after [`NAME_SHOWN_CHARS`] characters.
pub fn inert_line(text: &str) -> String {
    let cleaned: String = text
        .chars()
        .map(|c| {
            let bidi = matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}');
            if c.is_control() || bidi {
                ' '
            } else {
                c
            }
        })
        .collect();
    let words: Vec<&str> = cleaned.split_whitespace().collect();
    let line = words.join(" ");
    if line.chars().count() > NAME_SHOWN_CHARS {
        let cut: String = line.chars().take(NAME_SHOWN_CHARS).collect();
        format!("{cut}…")
    } else {
        line
    }
}

/// The invitation as an email: who invited the address to which
/// organisation with which role, until when, and how to accept.
pub fn invitation_email(request: &InvitationRequest) -> EmailContent {
    let organisation = inert_line(&request.organisation_name);
    let inviter = inert_line(&request.inviter_name);
    EmailContent {
        subject: format!("Invitation to join \"{organisation}\" on Uptime"),
        body: format!(
            "\"{inviter}\" invited you to join the organisation \"{organisation}\" \
             on Uptime as {role}.\n\n\
             To accept, send this token:\n\n{token}\n\n\
             to {url}, for example:\n\n\
             curl -X POST {url} -H 'Content-Type: application/json' \
             -d '{{\"token\": \"{token}\"}}'\n\n\
             (with your API key in Authorization to join with your existing \
             user; without one, a new user is made).\n\n\
             The invitation expires at {expires} UTC and works once.\n\n\
             If you did not expect this email, ignore it: nothing happens \
             unless you accept.\n",
            role = request.role,
            url = request.accept_url,
            token = request.token,
            expires = request.expires_at.format("%Y-%m-%d %H:%M"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn request(organisation: &str, inviter: &str) -> InvitationRequest {
        InvitationRequest {
            organisation_name: organisation.into(),
            inviter_name: inviter.into(),
            role: "editor".into(),
            expires_at: chrono::Utc
                .with_ymd_and_hms(2026, 12, 4, 10, 30, 0)
                .unwrap(),
            accept_url: "https://uptime.test/api/v1/invitations/accept".into(),
            token: "abc".into(),
        }
    }

    #[test]
    fn says_who_invited_whom_where_with_which_role_until_when_and_how() {
        let mail = invitation_email(&request("Acme", "Ada"));
        assert_eq!(mail.subject, "Invitation to join \"Acme\" on Uptime");
        assert!(mail
            .body
            .contains("\"Ada\" invited you to join the organisation \"Acme\""));
        assert!(mail.body.contains("as editor"));
        assert!(mail.body.contains("2026-12-04 10:30 UTC"));
        assert!(mail
            .body
            .contains("https://uptime.test/api/v1/invitations/accept"));
        assert!(mail.body.contains("\nabc\n"));
    }

    #[test]
    fn user_text_cannot_add_lines_reorder_or_run_on() {
        let forged = "Acme\r\nBcc: x@evil.test\n\nOpen https://evil.test\u{202E}gpj";
        let mail = invitation_email(&request(forged, &"A".repeat(500)));
        assert!(!mail.subject.contains('\n') && !mail.subject.contains('\r'));
        assert!(!mail.body.contains("\nBcc:") && !mail.body.contains("\nOpen https://evil"));
        assert!(!mail.body.contains('\u{202E}'));
        assert!(mail.body.contains(&format!("\"{}…\"", "A".repeat(100))));
        assert_eq!(inert_line("  a \t b\u{0}c "), "a b c");
    }
}
