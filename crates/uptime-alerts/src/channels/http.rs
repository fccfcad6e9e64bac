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

    /// Sends a provider's requests in order (a resolve before the trigger
    /// that follows it); the first failure ends the attempt, and a retry
    /// sends them all again, which the providers take once (same keys).
    /// Nothing to send (an event the provider has no use for) is success.
    /// URLs are never quoted in errors: Telegram's carries the bot token.
    pub(crate) async fn send_provider(
        &self,
        requests: &[super::providers::ProviderRequest],
    ) -> Result<Sent, SendError> {
        let mut sent = Sent { http_status: None };
        for request in requests {
            let mut headers = HeaderMap::new();
            for (name, value) in &request.headers {
                let mut value = reqwest::header::HeaderValue::from_str(value).map_err(|_| {
                    SendError::permanent(format!("the contact's {name} header is not valid"))
                })?;
                value.set_sensitive(true);
                headers.insert(*name, value);
            }
            let parsed = url::Url::parse(&request.url)
                .map_err(|e| SendError::permanent(format!("the provider's URL is invalid: {e}")))?;
            let body = serde_json::to_vec(&request.body).expect("JSON values serialise");
            sent = self
                .post_json(parsed, headers, body, Answer::Provider)
                .await?;
        }
        Ok(sent)
    }

    fn check_url(&self, parsed: &url::Url) -> Result<(), SendError> {
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
            .check_url_host(parsed)
            .map_err(|refused| SendError::permanent(safety::describe(&refused)))
    }

    async fn post(&self, url: &str, headers: HeaderMap, body: Vec<u8>) -> Result<Sent, SendError> {
        // The URL is never quoted: a Slack webhook's is its credential, and
        // errors are logged and kept in the delivery log.
        let parsed = url::Url::parse(url)
            .map_err(|e| SendError::permanent(format!("the contact's URL is invalid: {e}")))?;
        self.post_json(parsed, headers, body, Answer::Webhook).await
    }

    /// POSTs the JSON `body` to `url` once the URL passes the address
    /// rules; `answer` says whose answer comes back (a webhook's or a
    /// provider's), which [`classify`] reads differently.
    async fn post_json(
        &self,
        url: url::Url,
        headers: HeaderMap,
        body: Vec<u8>,
        answer: Answer,
    ) -> Result<Sent, SendError> {
        self.check_url(&url)?;
        let response = self
            .client
            .post(url)
            .headers(headers)
            .header(CONTENT_TYPE, "application/json")
            .body(body)
            .send()
            .await
            .map_err(|e| self.request_error(&e.without_url()))?;
        classify(response, answer).await
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

/// Whose answer is classified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    /// A webhook or Slack: its body's head is quoted as it is.
    Webhook,
    /// A provider's API, whose error bodies are JSON: their message is
    /// quoted plainly, and a `429` without `Retry-After` may say how long to
    /// wait in the body (Telegram's `parameters.retry_after`, Discord's
    /// `retry_after`).
    Provider,
}

/// Maps the receiver's answer to success, retry or failure.
async fn classify(response: reqwest::Response, answer: Answer) -> Result<Sent, SendError> {
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
    let json: Option<serde_json::Value> = (answer == Answer::Provider)
        .then(|| serde_json::from_slice(&head).ok())
        .flatten();
    let retry_after = retry_after.or_else(|| json.as_ref().and_then(body_retry_after));
    let plain = json.as_ref().and_then(error_message);
    let snippet: String = plain
        .unwrap_or_else(|| String::from_utf8_lossy(&head).into_owned())
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

/// What a provider's JSON error says: Telegram's `description`, the
/// `message` of PagerDuty, Opsgenie and Discord, with PagerDuty's and
/// Pushover's `errors` after it.
fn error_message(body: &serde_json::Value) -> Option<String> {
    let text = |v: &serde_json::Value| v.as_str().map(str::to_string);
    let mut parts: Vec<String> = ["description", "message"]
        .iter()
        .filter_map(|k| body.get(*k).and_then(text))
        .collect();
    if let Some(errors) = body.get("errors") {
        match errors {
            serde_json::Value::Array(items) => parts.extend(items.iter().filter_map(text)),
            serde_json::Value::Object(fields) => parts.extend(
                fields
                    .iter()
                    .map(|(k, v)| format!("{k}: {}", text(v).unwrap_or_else(|| v.to_string()))),
            ),
            _ => {}
        }
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// A wait asked for in a `429` body, in seconds: Telegram's
/// `parameters.retry_after`, Discord's `retry_after` (fractional).
fn body_retry_after(body: &serde_json::Value) -> Option<Duration> {
    let secs = body
        .pointer("/parameters/retry_after")
        .or_else(|| body.get("retry_after"))?
        .as_f64()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(86_400.0)))
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
    fn provider_errors_are_said_plainly_with_their_waits() {
        let telegram = serde_json::json!({"ok": false, "error_code": 429,
            "description": "Too Many Requests: retry after 7", "parameters": {"retry_after": 7}});
        assert_eq!(body_retry_after(&telegram), Some(Duration::from_secs(7)));
        assert_eq!(
            error_message(&telegram).as_deref(),
            Some("Too Many Requests: retry after 7")
        );
        let discord =
            serde_json::json!({"message": "You are being rate limited.", "retry_after": 0.5});
        assert_eq!(body_retry_after(&discord), Some(Duration::from_millis(500)));
        let pagerduty = serde_json::json!({"status": "invalid event", "message": "Event object is invalid",
            "errors": ["'routing_key' is missing"]});
        assert_eq!(
            error_message(&pagerduty).as_deref(),
            Some("Event object is invalid; 'routing_key' is missing")
        );
        let pushover = serde_json::json!({"user": "invalid", "errors": ["user identifier is invalid"], "status": 0});
        assert_eq!(
            error_message(&pushover).as_deref(),
            Some("user identifier is invalid")
        );
    }

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
