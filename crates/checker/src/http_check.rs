//! One HTTP or keyword check: request the target, judge the answer.
//!
//! - Send the request of `options.http` (default: a `GET` without headers or
//!   body): its method, its headers in order, its body, and basic auth
//!   (which replaces any `Authorization` header given) — with one shared
//!   client that opens a fresh connection per check (a pooled connection
//!   would hide DNS, TCP and TLS failures, and their time, which is what
//!   monitoring is for).
//! - Redirects are followed (up to [`MAX_REDIRECTS`]) as browsers do (a 303,
//!   or a 301/302 after a `POST`, goes on as a `GET` without the body);
//!   credentials are dropped when a redirect leaves the target's origin. The
//!   status judged is that of the final response.
//! - Pass iff the status equals `expected_status`, for keyword monitors the
//!   body contains (`contains`) or does not contain (`not_contains`) the
//!   keyword, and every assertion of `options.assertions` holds
//!   ([`crate::assertions`]); the error names the first of these that fails.
//!   Keywords match case-sensitively on the first `max_body_bytes` of the
//!   body, decoded as UTF-8 (invalid bytes replaced). The body is always
//!   read up to `max_body_bytes` (its time is part of the latency) and only
//!   decoded when a keyword or an assertion needs it.
//! - Secrets: the basic-auth password and the values of `Authorization` and
//!   `Proxy-Authorization` headers given are marked sensitive (hidden from
//!   `Debug`), never logged, and redacted from assertion verdicts (which
//!   quote the response, and a target may echo the request).
//! - The whole exchange, body included, must finish within `timeout_secs`.
//! - Certificates are always verified (public roots plus the configured extra
//!   CAs); for https the final certificate's `notAfter` is reported.

use crate::address::{AddressPolicy, TargetRefused};
use crate::assertions::{self, ResponseView};
use base64::Engine as _;
use chrono::{DateTime, Utc};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION, PROXY_AUTHORIZATION};
use reqwest::Method;
use std::time::{Duration, Instant};
use uptime_contracts::{
    Assertion, CheckOutcome, CheckSpec, HttpMethod, HttpRequest, KeywordType, MonitorKind,
};
use uptime_netguard::{causes, Refused, ResolveError};
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

    /// Runs one check, with `password` (opened from the spec's sealed one)
    /// for its basic auth. Never fails: every problem is a failed check with
    /// its reason.
    pub async fn check(&self, spec: &CheckSpec, password: Option<&str>) -> CheckReport {
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
        let request = match Request::of(spec.options.http.as_ref(), password) {
            Ok(request) => request,
            Err(e) => return CheckReport::failed(e),
        };
        let timeout_secs = spec.timeout_secs.get();
        let timeout = Duration::from_secs(u64::from(timeout_secs));
        let started = Instant::now();
        // reqwest's own timeout covers the body too; the outer one is a
        // backstop for anything that might not honour it.
        let exchange = tokio::time::timeout(timeout, self.exchange(url, &request, timeout)).await;
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
        // Status and keyword here; the assertions (user-supplied JSONPaths
        // and patterns) off the async threads and on a budget.
        report.error = judge(
            spec.expected_status.get(),
            keyword,
            &[],
            &response,
            latency_ms,
            &request.secrets,
        );
        if report.error.is_none() && !spec.options.assertions.is_empty() {
            let response = assertions::OwnedResponse {
                status: response.status,
                headers: response.headers,
                body: response.body,
                body_cut: response.body_cut,
                latency_ms,
                secrets: request.secrets,
            };
            report.error =
                assertions::evaluate_on_budget(spec.options.assertions.clone(), response).await;
        }
        if report.error.is_some() {
            report.outcome = CheckOutcome::Fail;
        }
        report
    }

    async fn exchange(
        &self,
        url: Url,
        request: &Request,
        timeout: Duration,
    ) -> Result<Exchange, reqwest::Error> {
        let mut builder = self
            .client
            .request(request.method.clone(), url)
            .headers(request.headers.clone())
            .timeout(timeout);
        if let Some(body) = &request.body {
            builder = builder.body(body.clone());
        }
        let mut response = builder.send().await?;
        let status = response.status().as_u16();
        let headers = response
            .headers()
            .iter()
            .map(|(name, value)| {
                let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
                (name.as_str().to_owned(), value)
            })
            .collect();
        let ssl_expires_at = response
            .extensions()
            .get::<reqwest::tls::TlsInfo>()
            .and_then(|info| info.peer_certificate())
            .and_then(certificate_not_after);
        let mut body = Vec::new();
        let mut body_cut = false;
        while let Some(chunk) = response.chunk().await? {
            let room = self.max_body_bytes - body.len();
            body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            if body.len() >= self.max_body_bytes {
                body_cut = true;
                break;
            }
        }
        Ok(Exchange {
            status,
            headers,
            body,
            body_cut,
            ssl_expires_at,
        })
    }
}

/// The request a check sends, checked and built before anything is sent.
/// Deliberately not `Debug`: it holds credentials.
struct Request {
    method: Method,
    headers: HeaderMap,
    body: Option<String>,
    /// Texts that must not appear in a verdict: the credentials sent.
    secrets: Vec<String>,
}

impl Request {
    /// The request of `http` (absent: a plain `GET`), its basic auth with
    /// `password`. `Err`: why it cannot be sent, never quoting a header's
    /// value.
    fn of(http: Option<&HttpRequest>, password: Option<&str>) -> Result<Self, String> {
        let Some(http) = http else {
            return Ok(Self {
                method: Method::GET,
                headers: HeaderMap::new(),
                body: None,
                secrets: Vec::new(),
            });
        };
        let mut headers = HeaderMap::new();
        let mut secrets = Vec::new();
        for (index, header) in http.headers.iter().enumerate() {
            let number = index + 1;
            let name = HeaderName::from_bytes(header.name.as_bytes())
                .map_err(|_| format!("request header {number} has an invalid name"))?;
            let mut value = HeaderValue::from_str(&header.value)
                .map_err(|_| format!("request header {number} ({name}) has an invalid value"))?;
            if name == AUTHORIZATION || name == PROXY_AUTHORIZATION {
                value.set_sensitive(true);
                secrets.extend(credentials_of(&header.value));
            }
            // `append`: a name may repeat, each value is sent in order.
            headers.append(name, value);
        }
        if let Some(auth) = &http.basic_auth {
            let password = password.unwrap_or("");
            let token = base64::engine::general_purpose::STANDARD
                .encode(format!("{}:{password}", auth.username));
            let mut value = HeaderValue::from_str(&format!("Basic {token}"))
                .map_err(|_| "basic auth: the username has characters a header cannot carry")?;
            value.set_sensitive(true);
            // Basic auth is the monitor's own setting: it wins over a header.
            headers.insert(AUTHORIZATION, value);
            secrets.push(token);
            secrets.push(password.to_owned());
        }
        Ok(Self {
            method: method(http.method),
            headers,
            body: http.body.clone(),
            secrets,
        })
    }
}

/// An `Authorization` value and, after its scheme, the credentials alone.
fn credentials_of(value: &str) -> Vec<String> {
    let mut secrets = vec![value.trim().to_owned()];
    if let Some((_scheme, credentials)) = value.trim().split_once(' ') {
        secrets.push(credentials.trim().to_owned());
    }
    secrets
}

fn method(method: HttpMethod) -> Method {
    match method {
        HttpMethod::Get => Method::GET,
        HttpMethod::Head => Method::HEAD,
        HttpMethod::Post => Method::POST,
        HttpMethod::Put => Method::PUT,
        HttpMethod::Patch => Method::PATCH,
        HttpMethod::Delete => Method::DELETE,
        HttpMethod::Options => Method::OPTIONS,
    }
}

/// A response read as far as a check needs.
struct Exchange {
    status: u16,
    /// The final response's headers, in order.
    headers: Vec<(String, String)>,
    /// At most `max_body_bytes`.
    body: Vec<u8>,
    /// Reading stopped at `max_body_bytes`.
    body_cut: bool,
    ssl_expires_at: Option<DateTime<Utc>>,
}

/// The failure of a response, if it fails: the status first, then the
/// keyword, then the assertions.
fn judge(
    expected_status: u16,
    keyword: Option<(&str, KeywordType)>,
    assertions: &[Assertion],
    response: &Exchange,
    latency_ms: u32,
    secrets: &[String],
) -> Option<String> {
    if response.status != expected_status {
        return Some(format!(
            "expected status {expected_status}, got {}",
            response.status
        ));
    }
    if let Some((keyword, keyword_type)) = keyword {
        let found = String::from_utf8_lossy(&response.body).contains(keyword);
        match (keyword_type, found) {
            (KeywordType::Contains, false) => {
                return Some(format!("keyword {keyword:?} not found"))
            }
            (KeywordType::NotContains, true) => return Some(format!("keyword {keyword:?} found")),
            _ => {}
        }
    }
    let view = ResponseView {
        status: response.status,
        headers: &response.headers,
        body: &response.body,
        body_cut: response.body_cut,
        latency_ms,
        secrets,
    };
    assertions::evaluate(assertions, &view)
}

/// `notAfter` of a DER certificate.
pub(crate) fn certificate_not_after(der: &[u8]) -> Option<DateTime<Utc>> {
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

#[cfg(test)]
mod tests;
