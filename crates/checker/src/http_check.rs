//! One HTTP or keyword check: request the target, judge the answer.
//!
//! - `GET` the target with one shared client that opens a fresh connection
//!   per check (a pooled connection would hide DNS, TCP and TLS failures, and
//!   their time, which is what monitoring is for).
//! - Redirects are followed (up to [`MAX_REDIRECTS`]); the status judged is
//!   that of the final response.
//! - Pass iff the status equals `expected_status` and, for keyword monitors,
//!   the body contains (`contains`) or does not contain (`not_contains`) the
//!   keyword. Matching is case-sensitive and on the first `max_body_bytes` of
//!   the body, decoded as UTF-8 (invalid bytes replaced).
//! - The whole exchange, body included, must finish within `timeout_secs`.
//! - Certificates are always verified (public roots plus the configured extra
//!   CAs); for https the final certificate's `notAfter` is reported.

use crate::address::{AddressPolicy, TargetRefused};
use chrono::{DateTime, Utc};
use std::error::Error as StdError;
use std::time::{Duration, Instant};
use uptime_contracts::{CheckOutcome, CheckSpecV2, KeywordType, MonitorKind};
use uptime_netguard::{Refused, ResolveError};
use url::Url;

/// Redirects followed before a check fails.
pub const MAX_REDIRECTS: usize = 10;

/// What building the shared client can fail on (configuration errors).
#[derive(Debug, thiserror::Error)]
pub enum ClientBuildError {
    #[error("extra root CA certificates: {0}")]
    RootCa(#[source] reqwest::Error),
    #[error("extra root CA file contains no certificate")]
    NoRootCa,
    #[error("HTTP client: {0}")]
    Client(#[source] reqwest::Error),
}

/// More redirects than [`MAX_REDIRECTS`].
#[derive(Debug, thiserror::Error)]
#[error("too many redirects (more than {MAX_REDIRECTS})")]
struct TooManyRedirects;

/// How the check client behaves, from the settings.
#[derive(Debug, Clone)]
pub struct HttpCheckerOptions {
    pub user_agent: String,
    /// PEM bytes of extra trusted CA certificates.
    pub extra_root_ca_pem: Option<Vec<u8>>,
    pub max_body_bytes: usize,
}

pub use crate::report::CheckReport;

/// Runs checks; one per process, shared by every check task.
#[derive(Clone)]
pub struct HttpChecker {
    client: reqwest::Client,
    policy: AddressPolicy,
    max_body_bytes: usize,
}

impl HttpChecker {
    pub fn new(
        policy: AddressPolicy,
        options: HttpCheckerOptions,
    ) -> Result<Self, ClientBuildError> {
        let redirect_policy = policy.clone();
        // Screened resolver, and no proxy ever (a proxy would resolve names
        // itself, out of reach of the resolver).
        let mut builder = uptime_netguard::client_builder(policy.guard())
            .use_rustls_tls()
            .tls_info(true)
            // A fresh connection per check: see the module documentation.
            .pool_max_idle_per_host(0)
            .user_agent(options.user_agent)
            .redirect(reqwest::redirect::Policy::custom(move |attempt| {
                if attempt.previous().len() > MAX_REDIRECTS {
                    return attempt.error(TooManyRedirects);
                }
                // Named hosts are judged again by the resolver when connecting.
                match redirect_policy.check_url(attempt.url()) {
                    Ok(()) => attempt.follow(),
                    Err(refused) => attempt.error(refused),
                }
            }));
        if let Some(pem) = &options.extra_root_ca_pem {
            let certificates =
                reqwest::Certificate::from_pem_bundle(pem).map_err(ClientBuildError::RootCa)?;
            if certificates.is_empty() {
                return Err(ClientBuildError::NoRootCa);
            }
            for certificate in certificates {
                builder = builder.add_root_certificate(certificate);
            }
        }
        Ok(Self {
            client: builder.build().map_err(ClientBuildError::Client)?,
            policy,
            max_body_bytes: options.max_body_bytes,
        })
    }

    /// Runs one check. Never fails: every problem is a failed check with its reason.
    pub async fn check(&self, spec: &CheckSpecV2) -> CheckReport {
        let url = match Url::parse(&spec.target) {
            Ok(url) => url,
            Err(e) => return CheckReport::failed(format!("invalid target URL: {e}")),
        };
        // Literal IP hosts never reach the resolver, so they are judged here.
        if let Err(refused) = self.policy.check_url(&url) {
            return CheckReport::failed(refused.to_string());
        }
        let keyword = match (spec.kind, spec.keyword.as_deref()) {
            (MonitorKind::Keyword, Some(k)) if !k.is_empty() => {
                Some((k, spec.keyword_type.unwrap_or(KeywordType::Contains)))
            }
            (MonitorKind::Keyword, _) => {
                return CheckReport::failed("keyword monitor has no keyword")
            }
            _ => None,
        };
        let timeout_secs = spec.timeout_secs.max(1);
        let timeout = Duration::from_secs(u64::from(timeout_secs));
        let started = Instant::now();
        // reqwest's own timeout covers the body too; the outer one is a
        // backstop for anything that might not honour it.
        let exchange = tokio::time::timeout(timeout, self.exchange(url, timeout)).await;
        let latency_ms = u32::try_from(started.elapsed().as_millis()).unwrap_or(u32::MAX);
        let response = match exchange {
            Err(_elapsed) => return CheckReport::failed(timed_out(timeout_secs)),
            Ok(Err(e)) => return CheckReport::failed(describe(&e, timeout_secs)),
            Ok(Ok(response)) => response,
        };
        let mut report = CheckReport {
            outcome: CheckOutcome::Pass,
            latency_ms: Some(latency_ms),
            http_status: Some(response.status),
            error: None,
            ssl_expires_at: response.ssl_expires_at,
        };
        report.error = judge(spec.expected_status, keyword, &response);
        if report.error.is_some() {
            report.outcome = CheckOutcome::Fail;
        }
        report
    }

    async fn exchange(&self, url: Url, timeout: Duration) -> Result<Exchange, reqwest::Error> {
        let mut response = self.client.get(url).timeout(timeout).send().await?;
        let status = response.status().as_u16();
        let ssl_expires_at = response
            .extensions()
            .get::<reqwest::tls::TlsInfo>()
            .and_then(|info| info.peer_certificate())
            .and_then(certificate_not_after);
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await? {
            let room = self.max_body_bytes - body.len();
            body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            if body.len() >= self.max_body_bytes {
                break;
            }
        }
        Ok(Exchange {
            status,
            body,
            ssl_expires_at,
        })
    }
}

/// A response read as far as a check needs.
struct Exchange {
    status: u16,
    /// At most `max_body_bytes`.
    body: Vec<u8>,
    ssl_expires_at: Option<DateTime<Utc>>,
}

/// The failure of a response, if it fails.
fn judge(
    expected_status: u16,
    keyword: Option<(&str, KeywordType)>,
    response: &Exchange,
) -> Option<String> {
    if response.status != expected_status {
        return Some(format!(
            "expected status {expected_status}, got {}",
            response.status
        ));
    }
    let (keyword, keyword_type) = keyword?;
    let found = String::from_utf8_lossy(&response.body).contains(keyword);
    match (keyword_type, found) {
        (KeywordType::Contains, false) => Some(format!("keyword {keyword:?} not found")),
        (KeywordType::NotContains, true) => Some(format!("keyword {keyword:?} found")),
        _ => None,
    }
}

/// `notAfter` of a DER certificate.
fn certificate_not_after(der: &[u8]) -> Option<DateTime<Utc>> {
    let (_, certificate) = x509_parser::parse_x509_certificate(der).ok()?;
    DateTime::from_timestamp(certificate.validity().not_after.timestamp(), 0)
}

fn timed_out(timeout_secs: u32) -> String {
    format!("timed out after {timeout_secs} s")
}

/// A failed exchange in words a monitor's owner understands.
fn describe(error: &reqwest::Error, timeout_secs: u32) -> String {
    if error.is_timeout() {
        return timed_out(timeout_secs);
    }
    let prefix = if error.is_redirect() {
        "redirect refused: "
    } else {
        ""
    };
    for cause in causes(error) {
        // Redirects are refused as a TargetRefused, names by the resolver
        // as a Refused (which never names the address a name resolved to).
        if let Some(refused) = cause.downcast_ref::<TargetRefused>() {
            return format!("{prefix}{refused}");
        }
        if let Some(refused) = cause.downcast_ref::<Refused>() {
            return format!("{prefix}{refused}");
        }
        if let Some(too_many) = cause.downcast_ref::<TooManyRedirects>() {
            return too_many.to_string();
        }
        if let Some(lookup) = cause.downcast_ref::<ResolveError>() {
            return lookup.to_string();
        }
        if let Some(tls) = cause.downcast_ref::<rustls::Error>() {
            return format!("TLS handshake failed: {tls}");
        }
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind::*;
            match io.kind() {
                ConnectionRefused => return "connection refused".into(),
                ConnectionReset => return "connection reset by the target".into(),
                UnexpectedEof => return "connection closed by the target".into(),
                _ => {}
            }
        }
    }
    // Nothing recognised: the whole chain, for the owner to read.
    let mut text = error.to_string();
    let mut previous = text.clone();
    for cause in causes(error).skip(1) {
        let line = cause.to_string();
        if !previous.contains(&line) {
            text = format!("{text}: {line}");
        }
        previous = line;
    }
    text
}

/// `error` and its causes. `io::Error::source` skips the error it wraps, so
/// that one is visited explicitly.
fn causes<'a>(
    error: &'a (dyn StdError + 'static),
) -> impl Iterator<Item = &'a (dyn StdError + 'static)> {
    let mut pending: Vec<&'a (dyn StdError + 'static)> = vec![error];
    std::iter::from_fn(move || {
        let current = pending.pop()?;
        if let Some(next) = current.source() {
            pending.push(next);
        }
        if let Some(inner) = current
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
        {
            pending.push(inner);
        }
        Some(current)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(status: u16, body: &str) -> Exchange {
        Exchange {
            status,
            body: body.as_bytes().to_vec(),
            ssl_expires_at: None,
        }
    }

    #[test]
    fn status_is_judged_before_the_keyword() {
        let response = exchange(503, "maintenance");
        assert_eq!(
            judge(200, Some(("maintenance", KeywordType::Contains)), &response).as_deref(),
            Some("expected status 200, got 503")
        );
    }

    #[test]
    fn keywords_match_case_sensitively() {
        let response = exchange(200, "All Systems Operational");
        let contains = |k| judge(200, Some((k, KeywordType::Contains)), &response);
        let lacks = |k| judge(200, Some((k, KeywordType::NotContains)), &response);
        assert_eq!(contains("Operational"), None);
        assert_eq!(
            contains("operational").as_deref(),
            Some("keyword \"operational\" not found")
        );
        assert_eq!(lacks("error"), None);
        assert_eq!(
            lacks("Systems").as_deref(),
            Some("keyword \"Systems\" found")
        );
    }

    #[test]
    fn invalid_utf8_does_not_hide_a_keyword() {
        let response = Exchange {
            status: 200,
            body: b"\xff\xfe status: up".to_vec(),
            ssl_expires_at: None,
        };
        assert_eq!(
            judge(200, Some(("up", KeywordType::Contains)), &response),
            None
        );
    }
}
