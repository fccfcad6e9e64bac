//! The REST API as the soak uses it: the demo key's requests, paced by the
//! rate limit's own `Retry-After` (a `429` runs nothing, so it is retried),
//! and every answer the contract does not allow recorded as a finding: a
//! `5xx`, or a status other than the one the call expects.

use anyhow::Context;
use reqwest::{Method, StatusCode};
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Answers the soak did not expect, for the verdict.
#[derive(Debug, Default)]
pub struct Findings {
    pub calls: u64,
    pub rate_limited: u64,
    pub problems: Vec<String>,
}

#[derive(Clone)]
pub struct Api {
    pub http: reqwest::Client,
    pub base: String,
    pub key: String,
    pub findings: Arc<Mutex<Findings>>,
}

/// Times a `429` is waited out before the call counts as failed.
const RATE_LIMIT_RETRIES: u32 = 20;

impl Api {
    pub fn new(base: &str, key: &str) -> anyhow::Result<Self> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()?;
        Ok(Self {
            http,
            base: base.to_string(),
            key: key.to_string(),
            findings: Default::default(),
        })
    }

    pub fn finding(&self, what: String) {
        eprintln!("soak: finding: {what}");
        self.findings.lock().expect("findings").problems.push(what);
    }

    /// `method path` with `key`; the answer's status and JSON body (`null`
    /// when it has none).
    pub async fn call_as(
        &self,
        key: &str,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> anyhow::Result<(StatusCode, Value)> {
        let url = format!("{}{path}", self.base);
        for _ in 0..RATE_LIMIT_RETRIES {
            let mut request = self.http.request(method.clone(), &url).bearer_auth(key);
            if let Some(body) = body {
                request = request.json(body);
            }
            let response = request
                .send()
                .await
                .with_context(|| format!("{method} {path}"))?;
            let status = response.status();
            let retry_after = response
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse::<u64>().ok());
            let text = response.text().await.unwrap_or_default();
            self.findings.lock().expect("findings").calls += 1;
            if status == StatusCode::TOO_MANY_REQUESTS {
                self.findings.lock().expect("findings").rate_limited += 1;
                tokio::time::sleep(Duration::from_secs(retry_after.unwrap_or(1).clamp(1, 10)))
                    .await;
                continue;
            }
            let value = if text.is_empty() {
                Value::Null
            } else {
                serde_json::from_str(&text).unwrap_or(Value::String(text))
            };
            if status.is_server_error() {
                self.finding(format!("{method} {path}: {status} {value}"));
            }
            return Ok((status, value));
        }
        anyhow::bail!("{method} {path}: still rate limited after {RATE_LIMIT_RETRIES} waits")
    }

    pub async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> anyhow::Result<(StatusCode, Value)> {
        self.call_as(&self.key, method, path, body).await
    }

    /// The call, which must answer `want`; anything else is a finding and
    /// an error.
    pub async fn expect(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        want: StatusCode,
    ) -> anyhow::Result<Value> {
        let (status, value) = self.call(method.clone(), path, body).await?;
        if status != want {
            let what = format!("{method} {path}: {status} (expected {want}) {value}");
            self.finding(what.clone());
            anyhow::bail!(what);
        }
        Ok(value)
    }

    pub async fn post(&self, path: &str, body: &Value) -> anyhow::Result<Value> {
        self.expect(Method::POST, path, Some(body), StatusCode::CREATED)
            .await
    }

    pub async fn get(&self, path: &str) -> anyhow::Result<Value> {
        self.expect(Method::GET, path, None, StatusCode::OK).await
    }

    /// `POST path` with an `Idempotency-Key`: the status, whether the
    /// answer says it was replayed, and the body.
    pub async fn post_idempotent(
        &self,
        path: &str,
        body: &Value,
        key: &str,
    ) -> anyhow::Result<(StatusCode, bool, Value)> {
        let response = self
            .http
            .post(format!("{}{path}", self.base))
            .bearer_auth(&self.key)
            .header("Idempotency-Key", key)
            .json(body)
            .send()
            .await
            .with_context(|| format!("POST {path}"))?;
        self.findings.lock().expect("findings").calls += 1;
        let status = response.status();
        let replayed = response
            .headers()
            .get("idempotent-replayed")
            .is_some_and(|v| v == "true");
        let value = response.json().await.unwrap_or(Value::Null);
        if status.is_server_error() {
            self.finding(format!("POST {path}: {status} {value}"));
        }
        Ok((status, replayed, value))
    }

    /// A GET without a key (status pages, badges, pings): the status and body.
    pub async fn get_public(&self, url: &str) -> anyhow::Result<(StatusCode, String)> {
        let response = self
            .http
            .get(url)
            .send()
            .await
            .with_context(|| format!("GET {url}"))?;
        let status = response.status();
        Ok((status, response.text().await.unwrap_or_default()))
    }
}

/// The id of a created resource.
pub fn id_of(v: &Value) -> anyhow::Result<i64> {
    v["id"].as_i64().with_context(|| format!("no id in {v}"))
}
