//! Alerts: what they say and how they are delivered. The notifier delivers
//! alerts with this crate and the api-gateway sends test alerts with it, so
//! both go through the very same code.
//!
//! - [`event`]: what an alert says ([`AlertEvent`], the webhook body and a
//!   delivery's stored payload, so a retry sends what the first attempt sent).
//! - [`render`]: how it reads to people (email subject and body, Slack
//!   message), one set of facts for every rendering.
//! - [`incident`]: what an alert means to an on-call provider: the incident
//!   it opens or closes, its key and its severity.
//! - [`channels`]: the [`Sender`] that delivers (email over SMTP, Slack and
//!   Standard Webhooks-signed webhooks, and the providers of
//!   [`channels::providers`]).
//! - [`signing`]: Standard Webhooks signatures of webhook bodies.
//! - [`ack_link`]: signed acknowledge links, so a person acknowledges from a
//!   phone without an API key.
//! - [`safety`]: which addresses alerts may go to (`uptime-netguard`'s
//!   rules, shared with the checker).
//! - [`error`]: how an attempt fails, and whether trying again may help.

pub mod ack_link;
pub mod channels;
pub mod error;
pub mod event;
pub mod incident;
pub mod render;
pub mod safety;
pub mod signing;

pub use ack_link::{AckClaim, AckLinkError, AckLinks};
pub use channels::providers::{OpsgenieRegion, ProviderOptions};
pub use channels::{address, Channel, Destination, ListMail, Outgoing, Sender, Sent};
pub use error::{Retry, SendError, SetupError};
pub use event::{
    AcknowledgeRequest, AlertEvent, EventType, InvitationRequest, VerificationRequest,
};
