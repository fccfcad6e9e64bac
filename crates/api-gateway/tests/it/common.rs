//! `spawn_app`: a real api-gateway on a free port, with its own database and
//! its own NATS server.
#![allow(dead_code)]

use api_gateway::settings::GatewaySettings;
use api_gateway::startup::Application;
use reqwest::{Method, StatusCode};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use uptime_testkit::TestEnv;

pub struct TestApp {
    pub base: String,
    /// The ops listener (`/healthz`, `/readyz`, `/metrics`).
    pub ops_addr: std::net::SocketAddr,
    pub client: reqwest::Client,
    pub env: TestEnv,
    pub state: actix_web::web::Data<api_gateway::state::AppState>,
    shutdown: CancellationToken,
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

pub async fn spawn_app() -> TestApp {
    spawn_app_with(|_| {}).await
}

pub async fn spawn_app_with(tweak: impl FnOnce(&mut GatewaySettings)) -> TestApp {
    let env = TestEnv::start().await;
    let mut settings = GatewaySettings::default();
    settings.http.listen = "127.0.0.1:0".into();
    settings.http.workers = 2;
    settings.database = env.db.settings();
    settings.nats = env.nats.settings();
    settings.safety.allow_private_targets = true;
    settings.rate_limit.per_second = 0;
    settings.secrets = uptime_testkit::secrets::test_secrets();
    tweak(&mut settings);
    let app = Application::build(settings).await.expect("build app");
    let base = format!("http://{}", app.addr());
    let ops_addr = app.ops_addr();
    let state = app.state();
    let shutdown = CancellationToken::new();
    tokio::spawn(app.run_until(shutdown.clone()));
    TestApp {
        base,
        ops_addr,
        client: reqwest::Client::new(),
        env,
        state,
        shutdown,
    }
}

impl TestApp {
    /// A new user and its first raw API key.
    pub async fn new_user(&self, name: &str) -> (i64, String) {
        let (user, key) = api_gateway::keys::create_user_with_key(&self.state.pool, name)
            .await
            .expect("create user");
        (user.id, key)
    }

    /// A new key of member `user_id` on organisation `org_id` (the
    /// membership must exist) with `scope`, inserted as the API inserts one
    /// (but not held to the role: a test may make the key a demotion left).
    pub async fn key_for(
        &self,
        org_id: i64,
        user_id: i64,
        scope: uptime_db::organisations::Scope,
    ) -> String {
        let raw = api_gateway::keys::generate();
        let mut conn = uptime_db::pool::conn(&self.state.pool).await.unwrap();
        uptime_db::api_keys::create(
            &mut conn,
            org_id,
            user_id,
            scope,
            "member key",
            &raw[..api_gateway::keys::SHOWN_PREFIX_LEN],
            &api_gateway::keys::digest(&raw),
        )
        .await
        .expect("create key");
        raw
    }

    /// Adds user `user_id` to organisation `org_id` with `role`.
    pub async fn add_member(
        &self,
        org_id: i64,
        user_id: i64,
        role: uptime_db::organisations::Role,
    ) {
        let mut conn = uptime_db::pool::conn(&self.state.pool).await.unwrap();
        uptime_db::organisations::add_member(&mut conn, org_id, user_id, role)
            .await
            .expect("add member");
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// Sends a request with `key` (if any) and a JSON body (if any); returns
    /// the status and the body parsed as JSON (`Value::Null` if empty).
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        key: Option<&str>,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut req = self.client.request(method, self.url(path));
        if let Some(key) = key {
            req = req.bearer_auth(key);
        }
        if let Some(body) = body {
            req = req.json(&body);
        }
        let res = req.send().await.expect("request sent");
        let status = res.status();
        let content_type = res
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("application/json")
            .to_string();
        let text = res.text().await.expect("body read");
        let is_json = res_is_json(&content_type);
        let json = if text.is_empty() {
            Value::Null
        } else if !is_json {
            // A text route (GET /api/v1/metrics): its body as a string.
            Value::String(text)
        } else {
            serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{status}: body is not JSON ({e}): {text}"))
        };
        (status, json)
    }

    pub async fn get(&self, path: &str, key: &str) -> (StatusCode, Value) {
        self.call(Method::GET, path, Some(key), None).await
    }

    pub async fn post(&self, path: &str, key: &str, body: Value) -> (StatusCode, Value) {
        self.call(Method::POST, path, Some(key), Some(body)).await
    }

    pub async fn patch(&self, path: &str, key: &str, body: Value) -> (StatusCode, Value) {
        self.call(Method::PATCH, path, Some(key), Some(body)).await
    }

    pub async fn delete(&self, path: &str, key: &str) -> (StatusCode, Value) {
        self.call(Method::DELETE, path, Some(key), None).await
    }
}

/// Whether a response's content type is JSON (or absent: an empty body).
fn res_is_json(content_type: &str) -> bool {
    !content_type.starts_with("application/openmetrics-text")
}
