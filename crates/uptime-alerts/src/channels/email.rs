//! Email over SMTP (lettre).

use crate::error::{chain, SendError, SetupError};
use crate::render::EmailContent;
use crate::Sent;
use lettre::message::header::{ContentType, HeaderName, HeaderValue};
use lettre::message::Mailbox;
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use std::time::Duration;
use uptime_config::{SmtpSettings, SmtpTls};

#[derive(Clone)]
pub(crate) struct EmailChannel {
    /// `None` when `smtp.host` is empty: email is switched off.
    transport: Option<AsyncSmtpTransport<Tokio1Executor>>,
    from: Mailbox,
}

impl EmailChannel {
    pub(crate) fn new(settings: &SmtpSettings) -> Result<Self, SetupError> {
        let from: Mailbox = settings
            .from
            .parse()
            .map_err(|_| SetupError::From(settings.from.clone()))?;
        if settings.host.trim().is_empty() {
            return Ok(Self {
                transport: None,
                from,
            });
        }
        let tls = |wrap: fn(TlsParameters) -> Tls| {
            TlsParameters::new(settings.host.clone())
                .map(wrap)
                .map_err(|source| SetupError::SmtpTls {
                    host: settings.host.clone(),
                    source,
                })
        };
        let tls = match settings.tls {
            SmtpTls::None => Tls::None,
            SmtpTls::Starttls => tls(Tls::Required)?,
            SmtpTls::Tls => tls(Tls::Wrapper)?,
        };
        let mut builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&settings.host)
            .port(settings.port)
            .tls(tls)
            .timeout(Some(Duration::from_secs(settings.timeout_secs.max(1))));
        if !settings.username.is_empty() {
            builder = builder.credentials(Credentials::new(
                settings.username.clone(),
                settings.password.clone(),
            ));
        }
        Ok(Self {
            transport: Some(builder.build()),
            from,
        })
    }

    pub(crate) async fn send(&self, to: &str, content: &EmailContent) -> Result<Sent, SendError> {
        let Some(transport) = &self.transport else {
            return Err(SendError::permanent(
                "email is switched off (smtp.host is empty)",
            ));
        };
        let to: Mailbox = to
            .parse()
            .map_err(|e| SendError::permanent(format!("invalid email address {to:?}: {e}")))?;
        let message = Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(content.subject.clone())
            .header(ContentType::TEXT_PLAIN)
            .body(content.body.clone())
            .map_err(|e| SendError::permanent(format!("building the email: {e}")))?;
        self.deliver(transport, message).await
    }

    /// A mail to a subscriber of a list (a status page's): RFC 2369's
    /// `List-Unsubscribe` with RFC 8058's `List-Unsubscribe-Post`, so mail
    /// clients offer a one-click unsubscribe that `POST`s to the link, and
    /// a `Message-ID` stable across retries of the same mail.
    pub(crate) async fn send_list_mail(
        &self,
        mail: &super::ListMail<'_>,
    ) -> Result<Sent, SendError> {
        let Some(transport) = &self.transport else {
            return Err(SendError::permanent(
                "email is switched off (smtp.host is empty)",
            ));
        };
        // The address is personal data: not in the error text.
        let to: Mailbox = mail
            .to
            .parse()
            .map_err(|e| SendError::permanent(format!("invalid subscriber address: {e}")))?;
        let header = |name: &str, value: String| {
            HeaderName::new_from_ascii(name.to_string())
                .map(|name| HeaderValue::new(name, value))
                .map_err(|e| SendError::permanent(format!("building the email: {e}")))
        };
        let message = Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(mail.subject.to_string())
            .message_id(Some(mail.message_id.to_string()))
            .raw_header(header(
                "List-Unsubscribe",
                format!("<{}>", mail.unsubscribe_url),
            )?)
            .raw_header(header(
                "List-Unsubscribe-Post",
                "List-Unsubscribe=One-Click".into(),
            )?)
            .header(ContentType::TEXT_PLAIN)
            .body(mail.body.to_string())
            .map_err(|e| SendError::permanent(format!("building the email: {e}")))?;
        self.deliver(transport, message).await
    }

    async fn deliver(
        &self,
        transport: &AsyncSmtpTransport<Tokio1Executor>,
        message: Message,
    ) -> Result<Sent, SendError> {
        match transport.send(message).await {
            Ok(_) => Ok(Sent { http_status: None }),
            Err(e) => {
                let message = format!("SMTP: {}", chain(&e));
                // A permanent (5xx) SMTP answer will not change; anything else
                // (4xx, connection trouble, timeouts) may.
                Err(if e.is_permanent() {
                    SendError::permanent(message)
                } else {
                    SendError::transient(message)
                })
            }
        }
    }
}
