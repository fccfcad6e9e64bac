//! A real api-gateway (its own database and NATS server) and the binary a
//! user runs against it.

use api_gateway::settings::GatewaySettings;
use api_gateway::startup::Application;
use serde_json::Value;
use std::path::Path;
use std::process::Output;
use tokio_util::sync::CancellationToken;
use uptime_testkit::TestEnv;

pub struct Gateway {
    pub base: String,
    pub key: String,
    _env: TestEnv,
    stop: CancellationToken,
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// A gateway without a rate limit.
pub async fn gateway() -> Gateway {
    gateway_with(|settings| settings.rate_limit.per_second = 0).await
}

/// A gateway with its settings changed by `adjust`.
pub async fn gateway_with(adjust: impl FnOnce(&mut GatewaySettings)) -> Gateway {
    let env = TestEnv::start().await;
    let mut settings = GatewaySettings::default();
    settings.http.listen = "127.0.0.1:0".into();
    settings.http.workers = 1;
    settings.database = env.db.settings();
    settings.nats = env.nats.settings();
    settings.secrets = uptime_testkit::secrets::test_secrets();
    adjust(&mut settings);
    let app = Application::build(settings).await.expect("gateway builds");
    let base = format!("http://{}", app.addr());
    let (_, key) = api_gateway::keys::create_user_with_key(&app.state().pool, "cli")
        .await
        .expect("a user");
    let stop = CancellationToken::new();
    tokio::spawn(app.run_until(stop.clone()));
    Gateway {
        base,
        key,
        _env: env,
        stop,
    }
}

impl Gateway {
    /// `POST /api/v1/{collection}` with `body`; the created resource.
    pub async fn post(&self, collection: &str, body: Value) -> Value {
        let res: Value = reqwest::Client::new()
            .post(format!("{}/api/v1/{collection}", self.base))
            .bearer_auth(&self.key)
            .json(&body)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert!(res["id"].is_i64(), "created {collection}: {res}");
        res
    }

    /// `PUT /api/v1/{path}` with `body`, which must succeed; the answer.
    pub async fn put(&self, path: &str, body: Value) -> Value {
        let res = reqwest::Client::new()
            .put(format!("{}/api/v1/{path}", self.base))
            .bearer_auth(&self.key)
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = res.status();
        let answer: Value = res.json().await.unwrap();
        assert!(status.is_success(), "PUT {path}: {status} {answer}");
        answer
    }

    pub async fn create(&self, body: Value) -> i64 {
        self.post("monitors", body).await["id"].as_i64().unwrap()
    }

    /// `GET /api/v1/{path}`, which must succeed.
    pub async fn get(&self, path: &str) -> Value {
        let res = reqwest::Client::new()
            .get(format!("{}/api/v1/{path}", self.base))
            .bearer_auth(&self.key)
            .send()
            .await
            .unwrap();
        let status = res.status();
        let answer: Value = res.json().await.unwrap();
        assert!(status.is_success(), "GET {path}: {status} {answer}");
        answer
    }

    /// The first page of a list (`limit=100`).
    pub async fn list(&self, collection: &str, field: &str) -> Vec<Value> {
        let res: Value = reqwest::Client::new()
            .get(format!("{}/api/v1/{collection}?limit=100", self.base))
            .bearer_auth(&self.key)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        res[field]
            .as_array()
            .unwrap_or_else(|| panic!("a list: {res}"))
            .clone()
    }

    /// Runs the binary with the gateway in its environment (no config file).
    pub async fn run(&self, args: &[&str]) -> Output {
        self.run_with(args, &[]).await
    }

    /// `run` with more environment (secrets for `{from_env}`), without a
    /// terminal (stdin is null).
    pub async fn run_with(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_uptimectl"));
        command
            .args(args)
            .env("UPTIME_API_URL", &self.base)
            .env("UPTIME_API_KEY", &self.key)
            .env("UPTIMECTL_CONFIG", "/nonexistent/uptimectl.yaml")
            .envs(env.iter().copied());
        command.output().await.expect("uptimectl runs")
    }
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, text).unwrap();
}
