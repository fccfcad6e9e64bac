//! Sending: one [`Sender`] per process, holding the HTTP client (with the
//! safety rules) and the SMTP transport.

mod email;
mod http;

use crate::error::{SendError, SetupError};
use crate::event::{AlertEvent, InvitationRequest, VerificationRequest};
use std::time::Duration;
use uptime_config::{SafetySettings, SmtpSettings};
use uuid::Uuid;

/// The channel of a contact (`alert_contacts.type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    Email,
    Slack,
    Webhook,
}

impl Channel {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "email" => Some(Channel::Email),
            "slack" => Some(Channel::Slack),
            "webhook" => Some(Channel::Webhook),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Channel::Email => "email",
            Channel::Slack => "slack",
            Channel::Webhook => "webhook",
        }
    }
}

/// Where a delivery goes: a contact's channel, address and signing secret.
#[derive(Debug, Clone, Copy)]
pub struct Destination<'a> {
    pub channel: Channel,
    /// The email address or the URL.
    pub value: &'a str,
    /// `whsec_...`, for webhooks.
    pub signing_secret: Option<&'a str>,
}

/// What a delivery sends.
#[derive(Debug, Clone, Copy)]
pub enum Outgoing<'a> {
    /// An alert; `delivery_id` is the delivery's stable id (the `webhook-id`).
    Alert {
        delivery_id: Uuid,
        event: &'a AlertEvent,
    },
    /// The verification email of an email contact.
    Verification(&'a VerificationRequest),
    /// The invitation to join an organisation (to an address, not a contact).
    Invitation(&'a InvitationRequest),
}

/// A successful attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sent {
    /// The receiver's HTTP status (HTTP channels).
    pub http_status: Option<u16>,
}

/// Sends alerts through every channel.
#[derive(Clone)]
pub struct Sender {
    http: http::HttpChannel,
    email: email::EmailChannel,
}

impl Sender {
    /// `http_timeout` bounds each webhook and Slack request.
    pub fn new(
        smtp: &SmtpSettings,
        safety: &SafetySettings,
        http_timeout: Duration,
    ) -> Result<Self, SetupError> {
        Ok(Self {
            http: http::HttpChannel::new(safety.allow_private_targets, http_timeout)?,
            email: email::EmailChannel::new(smtp)?,
        })
    }

    /// One attempt to deliver `what` to `to`.
    pub async fn send(&self, to: Destination<'_>, what: Outgoing<'_>) -> Result<Sent, SendError> {
        match (to.channel, what) {
            (Channel::Email, Outgoing::Alert { event, .. }) => {
                self.email
                    .send(to.value, &crate::render::email(event))
                    .await
            }
            (Channel::Email, Outgoing::Verification(request)) => {
                self.email
                    .send(to.value, &crate::render::verification_email(request))
                    .await
            }
            (Channel::Email, Outgoing::Invitation(request)) => {
                self.email
                    .send(to.value, &crate::render::invitation_email(request))
                    .await
            }
            (Channel::Slack, Outgoing::Alert { event, .. }) => {
                self.http
                    .send_slack(to.value, &crate::render::slack(event))
                    .await
            }
            (Channel::Webhook, Outgoing::Alert { delivery_id, event }) => {
                let secret = to.signing_secret.ok_or_else(|| {
                    SendError::permanent("the webhook contact has no signing secret")
                })?;
                self.http
                    .send_webhook(to.value, secret, delivery_id, event)
                    .await
            }
            (Channel::Slack | Channel::Webhook, Outgoing::Verification(_)) => Err(
                SendError::permanent("only email contacts are verified by email"),
            ),
            (Channel::Slack | Channel::Webhook, Outgoing::Invitation(_)) => {
                Err(SendError::permanent("invitations are sent by email only"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn email_is_refused_for_good_when_switched_off() {
        let smtp = SmtpSettings {
            host: String::new(),
            ..Default::default()
        };
        let sender =
            Sender::new(&smtp, &SafetySettings::default(), Duration::from_secs(1)).unwrap();
        let event = AlertEvent::test(chrono::Utc::now());
        let err = sender
            .send(
                Destination {
                    channel: Channel::Email,
                    value: "a@example.com",
                    signing_secret: None,
                },
                Outgoing::Alert {
                    delivery_id: Uuid::new_v4(),
                    event: &event,
                },
            )
            .await
            .unwrap_err();
        assert!(!err.is_retryable());
        assert!(err.message.contains("switched off"), "{err}");
    }

    #[tokio::test]
    async fn webhooks_need_a_secret_and_an_allowed_url() {
        let sender = Sender::new(
            &SmtpSettings::default(),
            &SafetySettings::default(),
            Duration::from_secs(1),
        )
        .unwrap();
        let event = AlertEvent::test(chrono::Utc::now());
        let send = |value: &'static str, secret: Option<&'static str>| {
            let sender = sender.clone();
            let event = event.clone();
            async move {
                sender
                    .send(
                        Destination {
                            channel: Channel::Webhook,
                            value,
                            signing_secret: secret,
                        },
                        Outgoing::Alert {
                            delivery_id: Uuid::new_v4(),
                            event: &event,
                        },
                    )
                    .await
                    .unwrap_err()
            }
        };
        let secret = Some("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
        assert!(send("https://hooks.example.com/x", None)
            .await
            .message
            .contains("no signing secret"));
        assert!(send("http://hooks.example.com/x", secret)
            .await
            .message
            .contains("https only"));
        let metadata = send("https://169.254.169.254/latest", secret).await;
        assert!(!metadata.is_retryable());
        assert!(metadata.message.contains("metadata"), "{metadata}");
        // The NAT64 form of 127.0.0.1 reaches loopback through a NAT64 gateway.
        let nat64 = send("https://[64:ff9b::7f00:1]/x", secret).await;
        assert!(!nat64.is_retryable(), "{nat64:?}");
        assert!(nat64.message.contains("loopback"), "{nat64}");
    }

    #[tokio::test]
    async fn a_refused_name_is_reported_without_its_address() {
        let sender = Sender::new(
            &SmtpSettings::default(),
            &SafetySettings::default(),
            Duration::from_secs(5),
        )
        .unwrap();
        let event = AlertEvent::test(chrono::Utc::now());
        let err = sender
            .send(
                Destination {
                    channel: Channel::Slack,
                    value: "https://localhost/services/x",
                    signing_secret: None,
                },
                Outgoing::Alert {
                    delivery_id: Uuid::new_v4(),
                    event: &event,
                },
            )
            .await
            .unwrap_err();
        assert!(!err.is_retryable(), "{err:?}");
        assert_eq!(
            err.message,
            "localhost resolves to a loopback address, which alerts may not be sent to"
        );
        assert!(
            !err.message.contains("127.0.0.1") && !err.message.contains("::1"),
            "{err}"
        );
    }
}
