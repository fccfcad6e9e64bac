//! A real HTTP server on loopback that receives webhooks for tests: it keeps
//! every request (method, path, headers, body) and answers with scripted
//! replies (status, `Retry-After`, delay), then a default one.

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tokio::task::JoinSet;

/// One answer of the receiver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub status: u16,
    /// Sent as `Retry-After: <secs>` when set.
    pub retry_after_secs: Option<u64>,
    /// How long to hold the request before answering.
    pub delay: Duration,
}

impl Reply {
    pub fn status(status: u16) -> Self {
        Self {
            status,
            retry_after_secs: None,
            delay: Duration::ZERO,
        }
    }

    pub fn after(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }
}

/// One request as received.
#[derive(Debug, Clone)]
pub struct ReceivedRequest {
    pub method: String,
    pub path: String,
    /// The query string, as sent (without `?`).
    pub query: Option<String>,
    /// Names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// When the request's body had arrived (wall clock, to compare with the
    /// times inside alerts).
    pub received_at: chrono::DateTime<chrono::Utc>,
}

impl ReceivedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "request body is not JSON ({e}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }
}

#[derive(Default)]
struct Shared {
    requests: Mutex<Vec<ReceivedRequest>>,
    script: Mutex<VecDeque<Reply>>,
    default: Mutex<Option<Reply>>,
    arrived: Notify,
}

/// A running receiver; it stops (with its connections) when dropped.
pub struct WebhookReceiver {
    addr: SocketAddr,
    shared: Arc<Shared>,
    _server: JoinSet<()>,
}

impl WebhookReceiver {
    /// Answers `200` to everything until told otherwise.
    pub async fn start() -> Self {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .expect("bind webhook receiver on 127.0.0.1");
        let addr = listener.local_addr().expect("receiver address");
        let shared = Arc::new(Shared::default());
        *shared.default.lock().expect("lock") = Some(Reply::status(200));
        let mut server = JoinSet::new();
        server.spawn(accept_loop(listener, shared.clone()));
        Self {
            addr,
            shared,
            _server: server,
        }
    }

    /// `http://127.0.0.1:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The next requests get these replies, in order; then the default.
    pub fn script(&self, replies: impl IntoIterator<Item = Reply>) {
        self.shared.script.lock().expect("lock").extend(replies);
    }

    /// The reply once the script is used up.
    pub fn set_default(&self, reply: Reply) {
        *self.shared.default.lock().expect("lock") = Some(reply);
    }

    /// Requests so far, oldest first (recorded on arrival, before any delay).
    pub fn received(&self) -> Vec<ReceivedRequest> {
        self.shared.requests.lock().expect("lock").clone()
    }

    /// Waits until at least `count` requests have arrived (panics after
    /// `deadline`) and returns all of them.
    pub async fn wait_for(&self, count: usize, deadline: Duration) -> Vec<ReceivedRequest> {
        let waiting = async {
            loop {
                let notified = self.shared.arrived.notified();
                let requests = self.received();
                if requests.len() >= count {
                    return requests;
                }
                notified.await;
            }
        };
        tokio::time::timeout(deadline, waiting)
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "expected {count} request(s) within {deadline:?}, got {}",
                    self.received().len()
                )
            })
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let shared = shared.clone();
                connections.spawn(async move {
                    let service = hyper::service::service_fn(move |req| respond(req, shared.clone()));
                    // Errors here are clients hanging up mid-request.
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

async fn respond(
    req: Request<Incoming>,
    shared: Arc<Shared>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let (parts, body) = req.into_parts();
    let body = body
        .collect()
        .await
        .map(|b| b.to_bytes().to_vec())
        .unwrap_or_default();
    let request = ReceivedRequest {
        method: parts.method.to_string(),
        path: parts.uri.path().to_string(),
        query: parts.uri.query().map(str::to_string),
        headers: parts
            .headers
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_ascii_lowercase(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body,
        received_at: chrono::Utc::now(),
    };
    let reply = {
        let scripted = shared.script.lock().expect("lock").pop_front();
        scripted.unwrap_or_else(|| {
            shared
                .default
                .lock()
                .expect("lock")
                .clone()
                .unwrap_or(Reply::status(200))
        })
    };
    shared.requests.lock().expect("lock").push(request);
    shared.arrived.notify_waiters();
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    let mut response = Response::builder()
        .status(StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .header("content-type", "text/plain");
    if let Some(secs) = reply.retry_after_secs {
        response = response.header("retry-after", secs.to_string());
    }
    Ok(response
        .body(Full::new(Bytes::from(format!("reply {}", reply.status))))
        .expect("valid response"))
}
