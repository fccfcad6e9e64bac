//! The real receivers alerts arrive at: a webhook receiver (each contact a
//! path of its own), a second one that refuses its first requests (the
//! notifier must retry, and still deliver once), and an SMTP listener on
//! the stack's own SMTP port (`scripts/up.sh` then starts no sink of its
//! own). What they got becomes [`Receipt`]s: an alert's `event_id` (the
//! webhook body's, the email's `Event id:` line) and who got it.

use super::verdicts::alerts::Receipt;
use uptime_testkit::receiver::{Reply, WebhookReceiver};
use uptime_testkit::smtp::SmtpServer;
use uuid::Uuid;

/// Requests the refusing receiver answers `503` first.
pub const REFUSED_FIRST: usize = 2;

pub struct Receivers {
    pub webhooks: WebhookReceiver,
    pub refusing: WebhookReceiver,
    pub smtp: SmtpServer,
}

/// The receiver name of a webhook contact at `path`.
pub fn webhook_receiver(path: &str) -> String {
    format!("webhook {path}")
}

pub fn refusing_receiver(path: &str) -> String {
    format!("refusing {path}")
}

pub fn email_receiver(address: &str) -> String {
    format!("email {address}")
}

/// An email alert's event id, from its `Event id:` line.
fn email_event_id(text: &str) -> Option<Uuid> {
    text.lines()
        .find_map(|l| l.trim().strip_prefix("Event id:"))
        .and_then(|id| id.trim().parse().ok())
}

impl Receivers {
    pub async fn start(smtp_port: u16) -> anyhow::Result<Self> {
        let smtp = SmtpServer::start_on(smtp_port).await.map_err(|e| {
            anyhow::anyhow!("the soak's SMTP listener cannot take 127.0.0.1:{smtp_port}: {e}")
        })?;
        let refusing = WebhookReceiver::start().await;
        refusing.script(std::iter::repeat_n(Reply::status(503), REFUSED_FIRST));
        Ok(Self {
            webhooks: WebhookReceiver::start().await,
            refusing,
            smtp,
        })
    }

    /// The verification links mailed to `address` so far.
    pub fn verification_links(&self, address: &str) -> Vec<String> {
        self.smtp
            .received()
            .iter()
            .filter(|m| m.rcpt_to.iter().any(|r| r == address))
            .filter(|m| m.header("subject").is_some_and(|s| s.starts_with("Verify")))
            .filter_map(|m| {
                m.text_body()
                    .split_whitespace()
                    .find(|w| w.contains("/alert-contacts/verify/"))
                    .map(str::to_string)
            })
            .collect()
    }

    /// Every alert received (answered 2xx), and how many mails were neither
    /// alerts nor verification links.
    pub fn receipts(&self) -> (Vec<Receipt>, usize) {
        let mut receipts = Vec::new();
        let webhook = |r: &uptime_testkit::receiver::ReceivedRequest, name: String| {
            let body: serde_json::Value = serde_json::from_slice(&r.body).unwrap_or_default();
            let event_id = if body["event"] == "test" {
                None
            } else {
                body["event_id"].as_str().and_then(|id| id.parse().ok())
            };
            Receipt {
                receiver: name,
                event_id,
            }
        };
        for r in self.webhooks.received() {
            receipts.push(webhook(&r, webhook_receiver(&r.path)));
        }
        // Those it refused were not received.
        for r in self.refusing.received().iter().skip(REFUSED_FIRST) {
            receipts.push(webhook(r, refusing_receiver(&r.path)));
        }
        let mut other_mail = 0;
        for mail in self.smtp.received() {
            if mail
                .header("subject")
                .is_some_and(|s| s.starts_with("Verify"))
            {
                continue;
            }
            match email_event_id(&mail.text_body()) {
                Some(id) => {
                    for to in &mail.rcpt_to {
                        receipts.push(Receipt {
                            receiver: email_receiver(to),
                            event_id: Some(id),
                        });
                    }
                }
                None => other_mail += 1,
            }
        }
        (receipts, other_mail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_email_alert_names_its_event() {
        let id = Uuid::from_u128(5);
        assert_eq!(
            email_event_id(&format!("Down\n\nEvent id: {id}\n")),
            Some(id)
        );
        assert_eq!(email_event_id("no id here"), None);
    }
}
