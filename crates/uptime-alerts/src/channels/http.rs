//! Slack incoming webhooks and generic signed webhooks: JSON POSTs through a
//! client that refuses internal addresses and follows no redirects.

use crate::error::{chain, Retry, SendError, SetupError};
use crate::event::AlertEvent;
use crate::safety;
use crate::Sent;
use reqwest::header::{HeaderMap, CONTENT_TYPE, RETRY_AFTER};
use reqwest::StatusCode;
use std::time::Duration;
use uptime_netguard::{find_refusal, AddressPolicy};
use uuid::Uuid;

/// How much of an error response's body the log keeps.
const BODY_SNIPPET_CHARS: usize = 200;
/// How much of an error response's body is read at most. A receiver chooses
/// its body's size, so reading it whole would let it fill our memory (an
/// endless 500 body once grew the api-gateway by gigabytes through test
/// alerts); the snippet needs at most 200 characters, four bytes each.
pub(crate) const MAX_ERROR_BODY_BYTES: usize = 4 * 1024;

#[derive(Clone)]
pub(crate) struct HttpChannel {
    client: reqwest::Client,
    policy: AddressPolicy,
    timeout: Duration,
}

impl HttpChannel {
    pub(crate) fn new(allow_private: bool, timeout: Duration) -> Result<Self, SetupError> {
        let policy = safety::policy(allow_private);
        // Screened resolver, and no proxy ever (a proxy would resolve names
        // itself, out of reach of the resolver).
        let client = uptime_netguard::client_builder(&policy)
            .timeout(timeout)
            .connect_timeout(timeout)
            .user_agent(concat!("uptime-alerts/", env!("CARGO_PKG_VERSION")))
            // A redirect could lead anywhere, including inside our network;
            // receivers must give the final URL.
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(Self {
            client,
            policy,
            timeout,
        })
    }

    pub(crate) async fn send_slack(
        &self,
        url: &str,
        message: &serde_json::Value,
    ) -> Result<Sent, SendError> {
        let body = serde_json::to_vec(message).expect("JSON values serialise");
        self.post(url, HeaderMap::new(), body).await
    }

    pub(crate) async fn send_webhook(
        &self,
        url: &str,
        secret: &str,
        delivery_id: Uuid,
        event: &AlertEvent,
    ) -> Result<Sent, SendError> {
        let body = serde_json::to_vec(event).expect("an AlertEvent always serialises");
        let id = delivery_id.to_string();
        let timestamp = chrono::Utc::now().timestamp();
        let signature = crate::signing::sign(secret, &id, timestamp, &body)
            .map_err(|e| SendError::permanent(e.to_string()))?;
        let mut headers = HeaderMap::new();
        headers.insert("webhook-id", header_value(&id));
        headers.insert("webhook-timestamp", header_value(&timestamp.to_string()));
        headers.insert("webhook-signature", header_value(&signature));
        self.post(url, headers, body).await
    }

    async fn post(&self, url: &str, headers: HeaderMap, body: Vec<u8>) -> Result<Sent, SendError> {
        let parsed = url::Url::parse(url)
            .map_err(|e| SendError::permanent(format!("invalid URL {url:?}: {e}")))?;
        let scheme_ok = parsed.scheme() == "https"
            || (self.policy.allows_private() && parsed.scheme() == "http");
        if !scheme_ok {
            return Err(SendError::permanent(format!(
                "URL scheme {:?} is not allowed (https only)",
                parsed.scheme()
            )));
        }
        // Literal hosts never reach the resolver, so they are judged here.
        self.policy
            .check_url_host(&parsed)
            .map_err(|refused| SendError::permanent(safety::describe(&refused)))?;
        let response = self
            .client
            .post(parsed)
            .headers(headers)
            .header(CONTENT_TYPE, "application/json")
            .body(body)
            .send()
            .await
            .map_err(|e| self.request_error(&e))?;
        classify(response).await
    }

    fn request_error(&self, e: &reqwest::Error) -> SendError {
        if let Some(refused) = find_refusal(e) {
            return SendError::permanent(safety::describe(refused));
        }
        if e.is_timeout() {
            return SendError::transient(format!(
                "no response within {} s",
                self.timeout.as_secs_f64()
            ));
        }
        SendError::transient(chain(e))
    }
}

fn header_value(s: &str) -> reqwest::header::HeaderValue {
    reqwest::header::HeaderValue::from_str(s)
        .expect("ids, digits and base64 are valid header values")
}

/// Maps the receiver's answer to success, retry or failure.
async fn classify(response: reqwest::Response) -> Result<Sent, SendError> {
    let status = response.status();
    if status.is_success() {
        return Ok(Sent {
            http_status: Some(status.as_u16()),
        });
    }
    let retry_after = retry_after(response.headers());
    let location = response
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let head = read_head(response, MAX_ERROR_BODY_BYTES).await;
    let snippet: String = String::from_utf8_lossy(&head)
        .chars()
        .take(BODY_SNIPPET_CHARS)
        .collect();
    let mut message = format!("HTTP {status}");
    if let Some(location) = location.filter(|_| status.is_redirection()) {
        message.push_str(&format!(": redirect to {location} not followed"));
    } else if !snippet.trim().is_empty() {
        message.push_str(&format!(": {}", snippet.trim()));
    }
    let retry = match status {
        StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE => {
            Retry::Later { after: retry_after }
        }
        StatusCode::REQUEST_TIMEOUT | StatusCode::TOO_EARLY => Retry::Later { after: None },
        s if s.is_server_error() => Retry::Later { after: None },
        _ => Retry::Never,
    };
    Err(SendError {
        message,
        retry,
        http_status: Some(status.as_u16()),
    })
}

/// At most `limit` bytes of the body, chunk by chunk; the rest is never read
/// (dropping the response closes the connection). A body that fails midway
/// gives what arrived before: it only feeds a log line.
async fn read_head(mut response: reqwest::Response, limit: usize) -> Vec<u8> {
    let mut head = Vec::new();
    while head.len() < limit {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let room = limit - head.len();
                head.extend_from_slice(&chunk[..chunk.len().min(room)]);
            }
            Ok(None) | Err(_) => break,
        }
    }
    head
}

/// `Retry-After` as seconds or an HTTP date.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    (at.with_timezone(&chrono::Utc) - chrono::Utc::now())
        .to_std()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_accepts_seconds_and_dates() {
        let mut h = HeaderMap::new();
        h.insert(RETRY_AFTER, "7".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(7)));
        let later = chrono::Utc::now() + chrono::Duration::seconds(120);
        h.insert(RETRY_AFTER, later.to_rfc2822().parse().unwrap());
        let got = retry_after(&h).unwrap();
        assert!(
            got > Duration::from_secs(100) && got <= Duration::from_secs(120),
            "{got:?}"
        );
        h.insert(RETRY_AFTER, "soon".parse().unwrap());
        assert_eq!(retry_after(&h), None);
    }
}
