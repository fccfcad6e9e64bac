//! The type of a monitor as the API names it, mirroring the contracts'
//! `MonitorKind` (the API's carries the API's documentation).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

mirror! {
    /// The kind of check.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum MonitorType = uptime_contracts::MonitorKind {
        /// Passes when the target answers with `expected_status` within `timeout_secs`.
        Http,
        /// An http check that also needs `keyword` present (`contains`) or absent (`not_contains`).
        Keyword,
        /// Passes when pinged at `/api/v1/heartbeat/{heartbeat_token}` at least every
        /// `interval_secs` (plus `timeout_secs` of grace).
        Heartbeat,
        /// Passes when a TCP connection to `target` (`host:port`) opens within `timeout_secs`.
        Tcp,
        /// Passes when a TLS handshake with `target` (`host:port` or an `https://` URL)
        /// succeeds with a valid, unexpired certificate for the name.
        Tls,
        /// Passes when a DNS query for `target` is answered (with `dns_expected`, if set).
        Dns,
        /// Passes when `target` answers ICMP echo requests within `timeout_secs`.
        Icmp,
    }
}
