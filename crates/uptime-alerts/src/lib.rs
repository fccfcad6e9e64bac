//! Alerts: what they say ([`event`], [`render`]) and how they are delivered
//! ([`channels`]: email over SMTP, Slack incoming webhooks, Standard
//! Webhooks-signed webhooks, and the on-call and chat providers of
//! [`channels::providers`]; [`incident`] names what a provider keeps as one
//! incident), with the address rules of [`safety`]
//! (`uptime-netguard`'s, shared with the checker).
//!
//! The notifier delivers alerts with it, and the api-gateway sends test
//! alerts with it, so both go through the very same code.

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
