//! The channel of a contact, the one type the body, its values and the
//! stored row agree on (below both `body` and `values`).

use crate::error::ApiError;
use serde::{Deserialize, Serialize};
use uptime_alerts::Channel;
use utoipa::ToSchema;

crate::routes::monitors::mirror! {
    /// The channel of a contact.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum ContactType = Channel {
        /// `value` is an email address; needs verification before it receives alerts.
        Email,
        /// `value` is a Slack incoming-webhook URL.
        Slack,
        /// `value` is a URL that receives signed JSON POSTs.
        Webhook,
        /// PagerDuty Events API v2: `secret` is the integration's routing key
        /// (32 characters); no `value`.
        #[serde(rename = "pagerduty")]
        PagerDuty,
        /// Opsgenie: `secret` is an API integration's key; `region` `us`
        /// (default) or `eu`; no `value`.
        Opsgenie,
        /// Microsoft Teams: `value` is a Workflows webhook URL ("When a Teams
        /// webhook request is received").
        Teams,
        /// Discord: `value` is a webhook URL (`.../api/webhooks/{id}/{token}`).
        Discord,
        /// Telegram: `value` is the chat id (a number, or `@channelname`),
        /// `secret` the bot token.
        Telegram,
        /// ntfy: `value` is the topic, `server` the server (default: the
        /// deployment's, ntfy.sh unless configured), `secret` an optional access token.
        Ntfy,
        /// Pushover: `value` is the user or group key, `secret` the application token.
        Pushover,
    }
}

impl ContactType {
    pub(crate) fn channel(self) -> Channel {
        self.into()
    }

    pub(crate) fn as_str(self) -> &'static str {
        self.channel().as_str()
    }

    pub(crate) fn from_db(s: &str) -> Result<Self, ApiError> {
        Channel::parse(s)
            .map(Self::from)
            .ok_or_else(|| ApiError::Internal(format!("contact type {s:?} in the database")))
    }
}
