//! A small client of the Chrome DevTools Protocol: starts Debian's headless
//! Chromium on a free debugging port, attaches to one page, sends commands
//! and keeps every event (console messages, exceptions, loads) for the test
//! to read.

use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpStream;
use tokio_websockets::{MaybeTlsStream, Message, WebSocketStream};

/// Where Chromium is: `UPTIME_TEST_CHROMIUM`, else `chromium` on `PATH`
/// (scripts/install-deps.sh installs Debian's).
fn chromium_binary() -> String {
    if let Ok(path) = std::env::var("UPTIME_TEST_CHROMIUM") {
        return path;
    }
    for dir in std::env::var("PATH").unwrap_or_default().split(':') {
        for name in ["chromium", "chromium-browser"] {
            let candidate = std::path::Path::new(dir).join(name);
            if candidate.is_file() {
                return candidate.to_string_lossy().into_owned();
            }
        }
    }
    panic!("no Chromium: install Debian's `chromium` (scripts/install-deps.sh) or set UPTIME_TEST_CHROMIUM")
}

pub struct Browser {
    _child: tokio::process::Child,
    _profile: tempfile::TempDir,
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    next_id: u64,
    session: String,
    /// Every event received so far, oldest first.
    pub events: Vec<Value>,
}

impl Browser {
    /// Starts Chromium and attaches to a new blank page.
    pub async fn launch(width: u32, height: u32) -> Browser {
        let profile = tempfile::tempdir().unwrap();
        let mut child = tokio::process::Command::new(chromium_binary())
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-extensions",
                "--hide-scrollbars",
                "--remote-debugging-port=0",
                &format!("--window-size={width},{height}"),
                &format!("--user-data-dir={}", profile.path().display()),
                "about:blank",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start chromium");
        let stderr = child.stderr.take().unwrap();
        let mut lines = BufReader::new(stderr).lines();
        let url = tokio::time::timeout(Duration::from_secs(30), async {
            while let Some(line) = lines.next_line().await.unwrap() {
                if let Some(url) = line.strip_prefix("DevTools listening on ") {
                    return url.trim().to_string();
                }
            }
            panic!("chromium exited before listening");
        })
        .await
        .expect("chromium announces its DevTools endpoint");
        // Keep draining stderr so Chromium never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let (ws, _) = tokio_websockets::ClientBuilder::new()
            .uri(&url)
            .expect("a DevTools URL")
            .connect()
            .await
            .expect("connect to DevTools");
        let mut browser = Browser {
            _child: child,
            _profile: profile,
            ws,
            next_id: 0,
            session: String::new(),
            events: Vec::new(),
        };
        let target = browser
            .call_browser("Target.createTarget", json!({"url": "about:blank"}))
            .await;
        let attached = browser
            .call_browser(
                "Target.attachToTarget",
                json!({"targetId": target["targetId"], "flatten": true}),
            )
            .await;
        browser.session = attached["sessionId"].as_str().unwrap().to_string();
        for domain in ["Page.enable", "Runtime.enable", "Log.enable"] {
            browser.call(domain, json!({})).await;
        }
        browser
    }

    async fn send(&mut self, method: &str, params: Value, session: Option<String>) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        self.ws
            .send(Message::text(message.to_string()))
            .await
            .unwrap();
        loop {
            let message = self.next_message().await;
            if message["id"] == id {
                if let Some(error) = message.get("error") {
                    panic!("{method}: {error}");
                }
                return message["result"].clone();
            }
            self.events.push(message);
        }
    }

    async fn next_message(&mut self) -> Value {
        loop {
            let frame = tokio::time::timeout(Duration::from_secs(30), self.ws.next())
                .await
                .expect("DevTools answers")
                .expect("DevTools connection open")
                .expect("a frame");
            if let Some(text) = frame.as_text() {
                return serde_json::from_str(text).unwrap();
            }
        }
    }

    async fn call_browser(&mut self, method: &str, params: Value) -> Value {
        self.send(method, params, None).await
    }

    /// A command to the page.
    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        let session = self.session.clone();
        self.send(method, params, Some(session)).await
    }

    /// Opens `url` and returns once its load event fired.
    pub async fn open(&mut self, url: &str) {
        let before = self.events.len();
        self.call("Page.navigate", json!({"url": url})).await;
        loop {
            if self.events[before..]
                .iter()
                .any(|e| e["method"] == "Page.loadEventFired")
            {
                return;
            }
            let message = self.next_message().await;
            self.events.push(message);
        }
    }

    /// The value of a JavaScript expression in the page.
    pub async fn eval(&mut self, expression: &str) -> Value {
        let result = self
            .call(
                "Runtime.evaluate",
                json!({"expression": expression, "returnByValue": true}),
            )
            .await;
        assert!(
            result.get("exceptionDetails").is_none(),
            "{expression}: {result}"
        );
        result["result"]["value"].clone()
    }

    /// A PNG of the page, full length.
    pub async fn screenshot(&mut self) -> Vec<u8> {
        use base64::Engine;
        let shot = self
            .call(
                "Page.captureScreenshot",
                json!({"format": "png", "captureBeyondViewport": true}),
            )
            .await;
        base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().unwrap())
            .unwrap()
    }

    /// Console errors, uncaught exceptions and error log entries so far.
    pub fn errors(&self) -> Vec<&Value> {
        self.events
            .iter()
            .filter(|e| {
                (e["method"] == "Runtime.consoleAPICalled" && e["params"]["type"] == "error")
                    || e["method"] == "Runtime.exceptionThrown"
                    || (e["method"] == "Log.entryAdded" && e["params"]["entry"]["level"] == "error")
            })
            .collect()
    }
}
