//! The REST API as the commands use it: JSON in, JSON out, errors as the
//! API says them (its `error` and `details`), lists followed to their end.

use crate::context::Target;
use serde_json::Value;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("cannot reach {url}: {source}")]
    Unreachable { url: String, source: reqwest::Error },
    /// The API refused: its status, `error` and each `details` entry (and
    /// the whole body, for callers that read more of it).
    #[error("{status}: {message}")]
    Refused {
        status: u16,
        message: String,
        body: Value,
    },
    #[error("the API answered something that is not JSON: {0}")]
    NotJson(String),
}

/// A client of one API with one key.
pub struct Client {
    http: reqwest::Client,
    target: Target,
}

/// The most items a list follows its cursor to (a bound on a runaway list).
pub const MAX_LIST_ITEMS: usize = 100_000;

impl Client {
    pub fn new(target: Target) -> Self {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .user_agent(concat!("uptimectl/", env!("CARGO_PKG_VERSION")))
            .build()
            .expect("a client with a timeout and a user agent builds");
        Self { http, target }
    }

    pub async fn get(&self, path: &str) -> Result<Value, ClientError> {
        self.send(reqwest::Method::GET, path, None).await
    }

    pub async fn post(&self, path: &str, body: Option<Value>) -> Result<Value, ClientError> {
        self.send(reqwest::Method::POST, path, body).await
    }

    /// The POST of an apply (or its dry run), which may take longer than
    /// the usual 30 seconds (thousands of resources in one transaction).
    /// Unlike other writes it waits out the rate limiter: an apply costs up
    /// to a full bucket, so a plan followed by its apply meets a 429, and
    /// repeating it is safe: a 429 did nothing, and an apply is
    /// declarative (the same set twice is the same end state).
    pub async fn post_apply(
        &self,
        path: &str,
        body: Value,
        timeout: Duration,
    ) -> Result<Value, ClientError> {
        self.send_with(reqwest::Method::POST, path, Some(body), Some(timeout), true)
            .await
    }

    /// Every item of a paged list (`{field: [...], next_cursor}`), following
    /// `next_cursor` up to `limit` items. `path` may carry a query already.
    pub async fn list(
        &self,
        path: &str,
        field: &str,
        limit: usize,
    ) -> Result<Vec<Value>, ClientError> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        let joiner = if path.contains('?') { '&' } else { '?' };
        loop {
            let page_size = (limit - items.len()).clamp(1, 100);
            let mut url = format!("{path}{joiner}limit={page_size}");
            if let Some(cursor) = &cursor {
                url.push_str("&cursor=");
                url.push_str(cursor);
            }
            let page = self.get(&url).await?;
            if let Some(page_items) = page[field].as_array() {
                items.extend(page_items.iter().cloned());
            }
            cursor = page["next_cursor"].as_str().map(str::to_string);
            if cursor.is_none() || items.len() >= limit.min(MAX_LIST_ITEMS) {
                items.truncate(limit);
                return Ok(items);
            }
        }
    }

    async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, ClientError> {
        let repeatable = method == reqwest::Method::GET;
        self.send_with(method, path, body, None, repeatable).await
    }

    async fn send_with(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
        timeout: Option<Duration>,
        repeatable: bool,
    ) -> Result<Value, ClientError> {
        let url = format!("{}{path}", self.target.api_url);
        let mut waits = 0;
        let res = loop {
            let mut req = self
                .http
                .request(method.clone(), &url)
                .bearer_auth(&self.target.api_key);
            if let Some(timeout) = timeout {
                req = req.timeout(timeout);
            }
            if let Some(body) = &body {
                req = req.json(body);
            }
            let res = req
                .send()
                .await
                .map_err(|source| ClientError::Unreachable {
                    url: url.clone(),
                    source,
                })?;
            // A read (or an apply) refused by the rate limiter is asked
            // again when the API says (`Retry-After`): an export of a large
            // organisation reads more than a bucket holds. Other writes are
            // not repeated.
            match rate_limited_wait(repeatable, &res, waits) {
                Some(wait) => {
                    waits += 1;
                    tokio::time::sleep(wait).await;
                }
                None => break res,
            }
        };
        let status = res.status();
        let text = res
            .text()
            .await
            .map_err(|source| ClientError::Unreachable { url, source })?;
        let json: Value = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).map_err(|_| ClientError::NotJson(text.clone()))?
        };
        if status.is_success() {
            return Ok(json);
        }
        Err(ClientError::Refused {
            status: status.as_u16(),
            message: refusal(&json),
            body: json,
        })
    }
}

/// How many times one read waits out the rate limiter before its 429 is
/// the answer.
pub const MAX_RATE_LIMIT_WAITS: u32 = 20;
/// The longest one wait, whatever `Retry-After` says.
pub const MAX_RATE_LIMIT_WAIT: Duration = Duration::from_secs(60);

/// How long to wait before asking again, when `res` is the 429 of a
/// `repeatable` request and it has waited fewer than
/// [`MAX_RATE_LIMIT_WAITS`] times.
fn rate_limited_wait(repeatable: bool, res: &reqwest::Response, waits: u32) -> Option<Duration> {
    if !repeatable
        || res.status() != reqwest::StatusCode::TOO_MANY_REQUESTS
        || waits >= MAX_RATE_LIMIT_WAITS
    {
        return None;
    }
    let secs = res
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(1)
        .max(1);
    Some(Duration::from_secs(secs).min(MAX_RATE_LIMIT_WAIT))
}

/// The API's error body as one line: `error` then each `field: message`.
fn refusal(body: &Value) -> String {
    let mut out = body["error"].as_str().unwrap_or("refused").to_string();
    for detail in body["details"].as_array().into_iter().flatten() {
        out.push_str(&format!(
            "; {}: {}",
            detail["field"].as_str().unwrap_or("?"),
            detail["message"].as_str().unwrap_or("?")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_refusal_reads_as_one_line_naming_each_field() {
        let body = json!({"error": "invalid request body", "details": [
            {"field": "name", "message": "required"},
            {"field": "interval_secs", "message": "at least 30"}]});
        assert_eq!(
            refusal(&body),
            "invalid request body; name: required; interval_secs: at least 30"
        );
    }
}
