//! The icmp probe: does the host answer ICMP echo requests (ping)?
//!
//! - The target is a host name or an IP address (no port). A name is
//!   resolved under the address rule like every check's (see
//!   [`super::endpoint`]) and its first address, in the resolver's
//!   order, is pinged.
//! - Up when at least one of [`ECHO_REQUESTS`] echo requests gets an echo
//!   reply before `timeout_secs` is over; one lost packet is not an outage.
//!   The requests go out [`MAX_SPACING`] apart (closer for timeouts under
//!   three seconds), each waits until the check's deadline, and the first
//!   reply ends the check. `latency_ms` is that reply's round trip.
//! - Down otherwise: "timed out after N s" when nothing came back, or the
//!   ICMP error that came back instead (destination unreachable, ...).
//!
//! Sockets: an unprivileged ICMP datagram socket where the kernel allows it
//! (the process's group is in `net.ipv4.ping_group_range`; the Helm chart
//! sets that sysctl on the checker pods), else a raw socket, which needs
//! CAP_NET_RAW. One socket per address family, opened at the first icmp
//! check and shared by all, so requests are told apart by sequence number
//! (and, on raw sockets, which see every ICMP packet of the host, by this
//! probe's identifier too).

use super::endpoint::{self, timed_out};
use crate::address::AddressPolicy;
use crate::report::{millis, CheckReport};
use futures::stream::{FuturesUnordered, StreamExt};
use std::net::IpAddr;
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::Duration;
use surge_ping::{Client, Config, IcmpPacket, PingIdentifier, PingSequence, SurgeError, ICMP};
use tokio::sync::OnceCell;
use tokio::time::Instant;
use uptime_contracts::CheckSpec;

/// Echo requests sent per check.
pub const ECHO_REQUESTS: u32 = 3;
/// The most time between two echo requests of a check (ping's default).
pub const MAX_SPACING: Duration = Duration::from_secs(1);
/// What each echo request carries.
const PAYLOAD: &[u8; 32] = b"uptime-checker echo request.....";

// ICMP types (RFC 792, RFC 4443) the replies are judged on.
const V4_ECHO_REPLY: u8 = 0;
const V4_UNREACHABLE: u8 = 3;
const V4_TIME_EXCEEDED: u8 = 11;
const V6_UNREACHABLE: u8 = 1;
const V6_TIME_EXCEEDED: u8 = 3;
const V6_ECHO_REPLY: u8 = 129;

pub struct IcmpProbe {
    policy: AddressPolicy,
    v4: OnceCell<Client>,
    v6: OnceCell<Client>,
    /// Identifies this probe's requests on raw sockets (datagram sockets get
    /// one from the kernel); random so checkers sharing a network namespace
    /// do not take each other's replies.
    identifier: u16,
    /// Sequence numbers, unique among this probe's requests in flight.
    sequence: AtomicU16,
}

impl IcmpProbe {
    pub fn new(policy: AddressPolicy) -> Self {
        let random = uuid::Uuid::new_v4().as_u128();
        Self {
            policy,
            v4: OnceCell::new(),
            v6: OnceCell::new(),
            identifier: random as u16,
            sequence: AtomicU16::new((random >> 16) as u16),
        }
    }

    /// Runs one check. Never fails: every problem is a failed check with its reason.
    pub async fn check(&self, spec: &CheckSpec) -> CheckReport {
        let host = match endpoint::parse_host(&spec.target) {
            Ok(host) => host,
            Err(e) => return CheckReport::failed(e.to_string()),
        };
        let timeout_secs = spec.timeout_secs.get();
        let timeout = Duration::from_secs(u64::from(timeout_secs));
        let deadline = Instant::now() + timeout;
        let ping = async {
            let addrs = endpoint::resolve(&self.policy, &host, 0)
                .await
                .map_err(|e| e.to_string())?;
            // `resolve` never returns an empty list; stay safe anyway.
            let ip = addrs
                .first()
                .map(|a| a.ip())
                .ok_or_else(|| format!("{host} has no address"))?;
            self.ping(ip, deadline, timeout).await
        };
        // Resolution has no timeout of its own; the requests end at the
        // deadline themselves, so this only ever cuts a slow lookup short.
        match tokio::time::timeout_at(deadline, ping).await {
            Err(_elapsed) => CheckReport::failed(timed_out(timeout_secs)),
            Ok(Err(None)) => CheckReport::failed(format!(
                "{}: no echo reply to {ECHO_REQUESTS} requests",
                timed_out(timeout_secs)
            )),
            Ok(Err(Some(reason))) => CheckReport::failed(reason),
            Ok(Ok(round_trip)) => CheckReport::passed(millis(round_trip)),
        }
    }

    /// The first echo reply's round trip; else the last ICMP error or
    /// failure seen (`None`: nothing came back at all).
    async fn ping(
        &self,
        ip: IpAddr,
        deadline: Instant,
        timeout: Duration,
    ) -> Result<Duration, Option<String>> {
        let client = self.client(ip).await.map_err(Some)?;
        let spacing = MAX_SPACING.min(timeout / ECHO_REQUESTS);
        let mut requests: FuturesUnordered<_> = (0..ECHO_REQUESTS)
            .map(|i| {
                let sequence = PingSequence(self.sequence.fetch_add(1, Ordering::Relaxed));
                let identifier = PingIdentifier(self.identifier);
                let client = client.clone();
                async move {
                    tokio::time::sleep(spacing * i).await;
                    let mut pinger = client.pinger(ip, identifier).await;
                    pinger.timeout(deadline.saturating_duration_since(Instant::now()));
                    pinger.ping(sequence, PAYLOAD).await
                }
            })
            .collect();
        let mut problem = None;
        while let Some(answer) = requests.next().await {
            match answer {
                // Dropping `requests` withdraws the requests still waiting.
                Ok((packet, round_trip)) => match judge_reply(&packet) {
                    None => return Ok(round_trip),
                    Some(error) => problem = Some(error),
                },
                Err(SurgeError::Timeout { .. }) => {}
                Err(e) => problem = Some(format!("echo request failed: {e}")),
            }
        }
        Err(problem)
    }

    /// The shared socket of `ip`'s family, opened on first use (a failure is
    /// not kept: the next check tries again).
    async fn client(&self, ip: IpAddr) -> Result<Client, String> {
        let (cell, kind) = match ip {
            IpAddr::V4(_) => (&self.v4, ICMP::V4),
            IpAddr::V6(_) => (&self.v6, ICMP::V6),
        };
        let client = cell
            .get_or_try_init(|| async {
                // Datagram first; surge-ping falls back to a raw socket.
                let config = Config::builder().kind(kind).build();
                let client = Client::new(&config).map_err(|e| {
                    tracing::warn!(error = %e, family = ?kind, "cannot open an ICMP socket");
                    format!(
                        "cannot open an ICMP socket ({}): the checker needs its group in \
                         net.ipv4.ping_group_range, or CAP_NET_RAW",
                        e.kind()
                    )
                })?;
                let socket = client.get_socket().get_type();
                tracing::info!(family = ?kind, ?socket, "opened the ICMP socket");
                Ok::<_, String>(client)
            })
            .await?;
        Ok(client.clone())
    }
}

/// `None` for an echo reply, else what the ICMP message says went wrong.
fn judge_reply(packet: &IcmpPacket) -> Option<String> {
    // The sender of the error is not named: it may be an internal router.
    let (icmp_type, code, unreachable, exceeded) = match packet {
        IcmpPacket::V4(p) if p.get_icmp_type().0 == V4_ECHO_REPLY => return None,
        IcmpPacket::V6(p) if p.get_icmpv6_type().0 == V6_ECHO_REPLY => return None,
        IcmpPacket::V4(p) => (
            p.get_icmp_type().0,
            p.get_icmp_code().0,
            V4_UNREACHABLE,
            V4_TIME_EXCEEDED,
        ),
        IcmpPacket::V6(p) => (
            p.get_icmpv6_type().0,
            p.get_icmpv6_code().0,
            V6_UNREACHABLE,
            V6_TIME_EXCEEDED,
        ),
    };
    let what = if icmp_type == unreachable {
        "destination unreachable".to_string()
    } else if icmp_type == exceeded {
        "time exceeded".to_string()
    } else {
        format!("ICMP type {icmp_type}")
    };
    Some(format!("{what} (code {code})"))
}
