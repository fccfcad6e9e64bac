//! The operator's client of the REST API: the apply path (`PUT
//! /api/v1/{kind}/by-ref/{ref}`), the reads behind the status, and the
//! delete. Answers are sorted into what the reconcile needs: accepted,
//! refused (a 4xx the spec must change to pass) or unreachable (worth a
//! retry: transport errors, 5xx, 429).

use crate::plan::{api_error_message, Kind, Observed};
use chrono::{DateTime, Utc};
use reqwest::{Method, StatusCode};
use serde_json::Value;
use std::time::Duration;

/// The longest error body read from the API (its error bodies are small;
/// this bounds a proxy's HTML page).
const MAX_ERROR_BODY: usize = 16 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// Worth retrying: the API did not answer, or answered 5xx/429.
    #[error("the API is unreachable: {0}")]
    Unreachable(String),
    /// The API refused the request (4xx); the message is its error.
    #[error("{0}")]
    Refused(String),
    #[error("building the HTTP client: {0}")]
    Client(#[from] reqwest::Error),
}

/// The API's base URL and the operator's key.
#[derive(Clone)]
pub struct Gateway {
    http: reqwest::Client,
    base: String,
    key: String,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        f.debug_struct("Gateway").field("base", &self.base).finish()
    }
}

impl Gateway {
    pub fn new(base: &str, key: &str, timeout: Duration) -> Result<Self, GatewayError> {
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .user_agent(concat!("uptime-operator/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Self {
            http,
            base: base.trim_end_matches('/').to_string(),
            key: key.to_string(),
        })
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(StatusCode, String), GatewayError> {
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.key);
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request
            .send()
            .await
            .map_err(|e| GatewayError::Unreachable(e.to_string()))?;
        let status = response.status();
        let bytes = response
            .bytes()
            .await
            .map_err(|e| GatewayError::Unreachable(e.to_string()))?;
        let text = String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_ERROR_BODY)]).into_owned();
        if status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS {
            return Err(GatewayError::Unreachable(api_error_message(
                status.as_u16(),
                &text,
            )));
        }
        Ok((status, text))
    }

    /// `PUT /api/v1/{kind}/by-ref/{api_ref}`: creates or replaces; the
    /// resource as the API shows it.
    pub async fn put_by_ref(
        &self,
        kind: Kind,
        api_ref: &str,
        body: &Value,
    ) -> Result<Value, GatewayError> {
        let path = format!("/api/v1/{}/by-ref/{api_ref}", kind.api_segment());
        let (status, text) = self.call(Method::PUT, &path, Some(body)).await?;
        json_of(status, &text)
    }

    /// `GET /api/v1/{kind}/{id}`; `None` when it is gone.
    pub async fn get(&self, kind: Kind, id: i64) -> Result<Option<Value>, GatewayError> {
        let path = format!("/api/v1/{}/{id}", kind.api_segment());
        let (status, text) = self.call(Method::GET, &path, None).await?;
        json_unless_gone(status, &text)
    }

    /// The id of the resource holding `api_ref`, if any (`GET
    /// /api/v1/{kind}/by-ref/{api_ref}`: one request whatever the size of
    /// the organisation). Only a deletion whose status lost the id needs
    /// it. Refs are `[a-z0-9._-]` (the operator's `<namespace>.<name>`),
    /// nothing a path must escape.
    pub async fn find_by_ref(
        &self,
        kind: Kind,
        api_ref: &str,
    ) -> Result<Option<i64>, GatewayError> {
        let path = format!("/api/v1/{}/by-ref/{api_ref}", kind.api_segment());
        let (status, text) = self.call(Method::GET, &path, None).await?;
        let Some(resource) = json_unless_gone(status, &text)? else {
            return Ok(None);
        };
        resource["id"]
            .as_i64()
            .map(Some)
            .ok_or_else(|| GatewayError::Unreachable("the API's answer has no id".into()))
    }

    /// `DELETE /api/v1/{kind}/{id}`; a resource already gone is no error.
    pub async fn delete(&self, kind: Kind, id: i64) -> Result<(), GatewayError> {
        let path = format!("/api/v1/{}/{id}", kind.api_segment());
        let (status, text) = self.call(Method::DELETE, &path, None).await?;
        if status.is_success() || status == StatusCode::NOT_FOUND {
            return Ok(());
        }
        Err(GatewayError::Refused(api_error_message(
            status.as_u16(),
            &text,
        )))
    }

    /// The monitor's open (or acknowledged) incident: the newest incident
    /// of the monitor, if it is not resolved.
    pub async fn open_incident(&self, monitor_id: i64) -> Result<Option<String>, GatewayError> {
        let path = format!("/api/v1/incidents?monitor_id={monitor_id}&limit=1");
        let (status, text) = self.call(Method::GET, &path, None).await?;
        if !status.is_success() {
            return Err(GatewayError::Refused(api_error_message(
                status.as_u16(),
                &text,
            )));
        }
        let page: Value = serde_json::from_str(&text)
            .map_err(|e| GatewayError::Unreachable(format!("the API's answer is not JSON: {e}")))?;
        Ok(page["incidents"]
            .as_array()
            .and_then(|list| list.first())
            .filter(|i| i["state"].as_str() != Some("resolved"))
            .and_then(|i| i["id"].as_str())
            .map(str::to_string))
    }

    /// What the status shows of a resource the API answered with (a
    /// monitor's open incident is read too).
    pub async fn observe(&self, kind: Kind, resource: &Value) -> Result<Observed, GatewayError> {
        let mut seen = observed_of(resource)
            .ok_or_else(|| GatewayError::Unreachable("the API's answer has no id".into()))?;
        match kind {
            Kind::Monitor => seen.open_incident_id = self.open_incident(seen.id).await?,
            // A contact has no checks: only its id is shown.
            Kind::AlertContact => {
                seen.state = None;
                seen.last_checked_at = None;
            }
        }
        Ok(seen)
    }
}

/// The JSON of a successful answer, or the API's own words for a refusal.
fn json_of(status: StatusCode, text: &str) -> Result<Value, GatewayError> {
    if !status.is_success() {
        return Err(GatewayError::Refused(api_error_message(
            status.as_u16(),
            text,
        )));
    }
    serde_json::from_str(text)
        .map_err(|e| GatewayError::Unreachable(format!("the API's answer is not JSON: {e}")))
}

/// As [`json_of`], with a `404` read as a resource that is gone (`None`).
fn json_unless_gone(status: StatusCode, text: &str) -> Result<Option<Value>, GatewayError> {
    if status == StatusCode::NOT_FOUND {
        return Ok(None);
    }
    json_of(status, text).map(Some)
}

/// The status fields of a resource as the API shows it (without the
/// incident, read separately).
pub fn observed_of(resource: &Value) -> Option<Observed> {
    let id = resource.get("id")?.as_i64()?;
    let paused = resource.get("active").and_then(Value::as_bool) == Some(false);
    let state = if paused {
        Some("paused".to_string())
    } else {
        resource
            .get("status")
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let last_checked_at = resource
        .get("last_checked_at")
        .and_then(Value::as_str)
        .and_then(|t| t.parse::<DateTime<Utc>>().ok());
    Some(Observed {
        id,
        state,
        last_checked_at,
        open_incident_id: None,
    })
}
