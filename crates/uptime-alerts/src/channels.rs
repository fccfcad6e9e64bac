//! Sending: one [`Sender`] per process, holding the HTTP client (with the
//! safety rules) and the SMTP transport.

pub mod address;
mod email;
mod http;
pub mod providers;

use crate::error::{SendError, SetupError};
use crate::event::{AcknowledgeRequest, AlertEvent, InvitationRequest, VerificationRequest};
use providers::{ProviderOptions, Target};
use std::time::Duration;
use uptime_config::{AlertProviderSettings, SafetySettings, SmtpSettings};
use uuid::Uuid;

/// The channel of a contact (`alert_contacts.type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    Email,
    Slack,
    Webhook,
    PagerDuty,
    Opsgenie,
    Teams,
    Discord,
    Telegram,
    Ntfy,
    Pushover,
}

impl Channel {
    pub const ALL: [Channel; 10] = [
        Channel::Email,
        Channel::Slack,
        Channel::Webhook,
        Channel::PagerDuty,
        Channel::Opsgenie,
        Channel::Teams,
        Channel::Discord,
        Channel::Telegram,
        Channel::Ntfy,
        Channel::Pushover,
    ];

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == s)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Channel::Email => "email",
            Channel::Slack => "slack",
            Channel::Webhook => "webhook",
            Channel::PagerDuty => "pagerduty",
            Channel::Opsgenie => "opsgenie",
            Channel::Teams => "teams",
            Channel::Discord => "discord",
            Channel::Telegram => "telegram",
            Channel::Ntfy => "ntfy",
            Channel::Pushover => "pushover",
        }
    }
}

/// Where a delivery goes: a contact's channel, address and credentials.
#[derive(Clone, Copy)]
pub struct Destination<'a> {
    pub channel: Channel,
    /// The email address, the URL, or a provider's address (chat id,
    /// topic, user key; see [`providers`]).
    pub value: &'a str,
    /// `whsec_...`, for webhooks.
    pub signing_secret: Option<&'a str>,
    /// A provider contact's credential, opened (routing key, API key, bot
    /// token, application token, access token).
    pub secret: Option<&'a str>,
    pub options: &'a ProviderOptions,
}

impl std::fmt::Debug for Destination<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Credentials never reach a log through a Debug print.
        f.debug_struct("Destination")
            .field("channel", &self.channel)
            .field("secret", &self.secret.map(|_| "[set]"))
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl<'a> Destination<'a> {
    /// A destination without provider credentials or options (email,
    /// Slack, webhooks).
    pub fn plain(channel: Channel, value: &'a str, signing_secret: Option<&'a str>) -> Self {
        static NO_OPTIONS: ProviderOptions = ProviderOptions {
            region: None,
            server: None,
        };
        Self {
            channel,
            value,
            signing_secret,
            secret: None,
            options: &NO_OPTIONS,
        }
    }
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
    /// An incident acknowledged in Uptime, told to an on-call provider
    /// (PagerDuty, Opsgenie) under the key its alerts were sent with.
    Acknowledge(&'a AcknowledgeRequest),
}

/// A mail to a subscriber of a status page (see
/// [`Sender::send_list_mail`]).
#[derive(Clone, Copy)]
pub struct ListMail<'a> {
    pub to: &'a str,
    pub subject: &'a str,
    /// Plain text.
    pub body: &'a str,
    /// The one-click unsubscribe URL (`List-Unsubscribe`), also in the body.
    pub unsubscribe_url: &'a str,
    /// `<id@host>`, the same for every attempt of one mail, so a mail sent
    /// twice (a crash between sending and recording it) shows once in
    /// clients that thread by it.
    pub message_id: &'a str,
}

impl std::fmt::Debug for ListMail<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The address and the unsubscribe link stay out of logs.
        f.debug_struct("ListMail")
            .field("subject", &self.subject)
            .field("message_id", &self.message_id)
            .finish_non_exhaustive()
    }
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
    providers: std::sync::Arc<AlertProviderSettings>,
}

impl Sender {
    /// `http_timeout` bounds each HTTP request (webhooks, Slack, providers).
    pub fn new(
        smtp: &SmtpSettings,
        safety: &SafetySettings,
        http_timeout: Duration,
    ) -> Result<Self, SetupError> {
        Self::with_providers(
            smtp,
            safety,
            http_timeout,
            &AlertProviderSettings::default(),
        )
    }

    /// Like [`Sender::new`], with the providers' endpoints of `providers`.
    pub fn with_providers(
        smtp: &SmtpSettings,
        safety: &SafetySettings,
        http_timeout: Duration,
        providers: &AlertProviderSettings,
    ) -> Result<Self, SetupError> {
        Ok(Self {
            http: http::HttpChannel::new(safety.allow_private_targets, http_timeout)?,
            email: email::EmailChannel::new(smtp)?,
            providers: std::sync::Arc::new(providers.clone()),
        })
    }

    /// One attempt to send a subscriber's mail (email only).
    pub async fn send_list_mail(&self, mail: &ListMail<'_>) -> Result<Sent, SendError> {
        self.email.send_list_mail(mail).await
    }

    /// One attempt to deliver `what` to `to`.
    pub async fn send(&self, to: Destination<'_>, what: Outgoing<'_>) -> Result<Sent, SendError> {
        if let Some(render) = provider_renderer(to.channel) {
            let target = Target {
                value: to.value,
                secret: to.secret,
                options: to.options,
                urls: &self.providers,
            };
            let requests = match what {
                Outgoing::Alert { event, .. } => render(event, target)?,
                Outgoing::Acknowledge(request) => match to.channel {
                    Channel::PagerDuty => providers::pagerduty::acknowledge(request, target)?,
                    Channel::Opsgenie => providers::opsgenie::acknowledge(request, target)?,
                    _ => return Err(not_acknowledgeable(to.channel)),
                },
                Outgoing::Verification(_) | Outgoing::Invitation(_) => {
                    return Err(SendError::permanent(
                        "only email contacts are verified by email",
                    ))
                }
            };
            return self.http.send_provider(&requests).await;
        }
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
            (_, Outgoing::Verification(_)) => Err(SendError::permanent(
                "only email contacts are verified by email",
            )),
            (_, Outgoing::Invitation(_)) => {
                Err(SendError::permanent("invitations are sent by email only"))
            }
            (_, Outgoing::Acknowledge(_)) => Err(not_acknowledgeable(to.channel)),
            (_, Outgoing::Alert { .. }) => Err(SendError::permanent(format!(
                "no sender for {} contacts",
                to.channel.as_str()
            ))),
        }
    }
}

/// Acknowledgements go to the providers that page people (and escalate on
/// their own until acknowledged); the intake writes them for no other.
fn not_acknowledgeable(channel: Channel) -> SendError {
    SendError::permanent(format!(
        "{} contacts are not told about acknowledgements",
        channel.as_str()
    ))
}

type Renderer = fn(&AlertEvent, Target<'_>) -> Result<Vec<providers::ProviderRequest>, SendError>;

/// The provider module that renders alerts for `channel`, if it is one.
fn provider_renderer(channel: Channel) -> Option<Renderer> {
    Some(match channel {
        Channel::PagerDuty => providers::pagerduty::render,
        Channel::Opsgenie => providers::opsgenie::render,
        Channel::Teams => providers::teams::render,
        Channel::Discord => providers::discord::render,
        Channel::Telegram => providers::telegram::render,
        Channel::Ntfy => providers::ntfy::render,
        Channel::Pushover => providers::pushover::render,
        Channel::Email | Channel::Slack | Channel::Webhook => return None,
    })
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
                Destination::plain(Channel::Email, "a@example.com", None),
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
                        Destination::plain(Channel::Webhook, value, secret),
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
                Destination::plain(Channel::Slack, "https://localhost/services/x", None),
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
