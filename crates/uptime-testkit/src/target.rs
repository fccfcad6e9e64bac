//! A real HTTP(S) server on loopback to point checks at, whose behaviour a
//! test switches while it runs: the status it answers, its body, how long it
//! waits before answering. It counts the requests it receives.
//!
//! - `GET /anything` answers with the configured status and body after the
//!   configured delay.
//! - `GET /redirect-to?url=<percent-encoded URL>` answers `302 Found` with
//!   `Location: <URL>` (no delay), to test how clients follow redirects.
//!
//! Any method is answered alike. A test may require basic auth
//! ([`TargetServer::require_basic_auth`]: `401` without it). A test may add headers to the answers
//! ([`TargetServer::set_response_headers`]) and, to see what clients send,
//! have the server keep the requests it receives, bodies included
//! ([`TargetServer::record_requests`]; off by default, so benchmarks pay
//! nothing for it).
//!
//! [`TargetServer::start_https`] serves TLS with a leaf certificate for
//! `127.0.0.1` and `localhost` signed by a CA generated for this server alone;
//! a client trusts it with [`TargetServer::ca_pem`]. The leaf's `notAfter` is
//! chosen ([`TargetServer::start_https_expiring_at`]) so tests can assert what
//! a client reads from it.

use chrono::{DateTime, DurationRound, Utc};
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::task::JoinSet;

/// What the server answers; shared with every connection task.
struct Behaviour {
    status: AtomicU16,
    body: Mutex<String>,
    delay_ms: AtomicU64,
    hits: AtomicU64,
    /// Added to every non-redirect answer, replacing defaults of the same name.
    response_headers: Mutex<Vec<(String, String)>>,
    recording: AtomicBool,
    /// The last [`MAX_RECORDED`] requests, when recording.
    received: Mutex<VecDeque<ReceivedRequest>>,
    /// The `Authorization` value a request must carry, else `401`.
    required_authorization: Mutex<Option<String>>,
}

/// Requests kept when recording; older ones are dropped.
const MAX_RECORDED: usize = 1000;

/// A request as the target received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceivedRequest {
    pub method: String,
    /// Path and query, e.g. `/health?x=1`.
    pub path: String,
    /// In the order received; names lowercase.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl ReceivedRequest {
    /// Every value of header `name` (any case), in order.
    pub fn header(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect()
    }
}

/// The TLS side of an https target.
struct TlsMaterial {
    ca_pem: String,
    not_after: DateTime<Utc>,
}

/// A running target; it stops (with all its connections) when dropped.
pub struct TargetServer {
    addr: SocketAddr,
    behaviour: Arc<Behaviour>,
    tls: Option<TlsMaterial>,
    server: tokio::task::JoinHandle<()>,
}

impl TargetServer {
    /// A plain HTTP target answering `200 OK` with body `ok` at once.
    pub async fn start() -> Self {
        Self::spawn(None, None).await
    }

    /// An https target whose certificate expires 90 days from now (to the second).
    pub async fn start_https() -> Self {
        let not_after = (Utc::now() + chrono::Duration::days(90))
            .duration_trunc(chrono::Duration::seconds(1))
            .expect("truncate to seconds");
        Self::start_https_expiring_at(not_after).await
    }

    /// An https target whose leaf certificate's `notAfter` is `not_after`
    /// (X.509 keeps whole seconds; sub-second parts are dropped).
    pub async fn start_https_expiring_at(not_after: DateTime<Utc>) -> Self {
        let (acceptor, material) = tls_acceptor(not_after);
        Self::spawn(Some(acceptor), Some(material)).await
    }

    async fn spawn(acceptor: Option<tokio_rustls::TlsAcceptor>, tls: Option<TlsMaterial>) -> Self {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .expect("bind target server on 127.0.0.1");
        let addr = listener.local_addr().expect("target address");
        let behaviour = Arc::new(Behaviour {
            status: AtomicU16::new(200),
            body: Mutex::new("ok".into()),
            delay_ms: AtomicU64::new(0),
            hits: AtomicU64::new(0),
            response_headers: Mutex::new(Vec::new()),
            recording: AtomicBool::new(false),
            received: Mutex::new(VecDeque::new()),
            required_authorization: Mutex::new(None),
        });
        let server = tokio::spawn(accept_loop(listener, acceptor, behaviour.clone()));
        Self {
            addr,
            behaviour,
            tls,
            server,
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    fn scheme(&self) -> &'static str {
        if self.tls.is_some() {
            "https"
        } else {
            "http"
        }
    }

    /// `http(s)://127.0.0.1:PORT{path}`; `path` starts with `/`.
    pub fn url(&self, path: &str) -> String {
        format!("{}://{}{path}", self.scheme(), self.addr)
    }

    /// Like [`url`](Self::url) with `host` (e.g. `localhost`) instead of the IP.
    pub fn url_with_host(&self, host: &str, path: &str) -> String {
        format!("{}://{host}:{}{path}", self.scheme(), self.addr.port())
    }

    /// A URL on this server that redirects (302) to `location`.
    pub fn redirect_url(&self, location: &str) -> String {
        let query: String = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("url", location)
            .finish();
        self.url(&format!("/redirect-to?{query}"))
    }

    pub fn set_status(&self, status: u16) {
        self.behaviour.status.store(status, Ordering::SeqCst);
    }

    pub fn set_body(&self, body: impl Into<String>) {
        *self.behaviour.body.lock().expect("body lock") = body.into();
    }

    /// How long to wait before answering (redirects answer at once).
    pub fn set_delay(&self, delay: Duration) {
        let ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
        self.behaviour.delay_ms.store(ms, Ordering::SeqCst);
    }

    /// Requests received so far (counted when they arrive, before any delay).
    pub fn hits(&self) -> u64 {
        self.behaviour.hits.load(Ordering::SeqCst)
    }

    /// Headers added to every answer but redirects, in order; one named like
    /// a default header (`content-type`) replaces it.
    pub fn set_response_headers(&self, headers: &[(&str, &str)]) {
        *self
            .behaviour
            .response_headers
            .lock()
            .expect("headers lock") = headers
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
    }

    /// From now on, answer `401 Unauthorized` (with `WWW-Authenticate:
    /// Basic`) to every request without exactly these basic-auth
    /// credentials, as a protected status page does.
    pub fn require_basic_auth(&self, username: &str, password: &str) {
        use base64::Engine as _;
        let token =
            base64::engine::general_purpose::STANDARD.encode(format!("{username}:{password}"));
        *self
            .behaviour
            .required_authorization
            .lock()
            .expect("authorization lock") = Some(format!("Basic {token}"));
    }

    /// From now on, keep each request received (the last 1000), body
    /// included, for [`requests`](Self::requests).
    pub fn record_requests(&self) {
        self.behaviour.recording.store(true, Ordering::SeqCst);
    }

    /// The requests kept since [`record_requests`](Self::record_requests),
    /// oldest first.
    pub fn requests(&self) -> Vec<ReceivedRequest> {
        let received = self.behaviour.received.lock().expect("requests lock");
        received.iter().cloned().collect()
    }

    /// The PEM of the CA that signed this https target's certificate.
    pub fn ca_pem(&self) -> &str {
        &self.tls.as_ref().expect("ca_pem of an http target").ca_pem
    }

    /// The leaf certificate's `notAfter` (https targets only).
    pub fn not_after(&self) -> DateTime<Utc> {
        self.tls
            .as_ref()
            .expect("not_after of an http target")
            .not_after
    }
}

impl Drop for TargetServer {
    fn drop(&mut self) {
        // Aborting the accept loop drops its JoinSet, which aborts every connection.
        self.server.abort();
    }
}

async fn accept_loop(
    listener: TcpListener,
    acceptor: Option<tokio_rustls::TlsAcceptor>,
    behaviour: Arc<Behaviour>,
) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let acceptor = acceptor.clone();
                let behaviour = behaviour.clone();
                connections.spawn(async move {
                    match acceptor {
                        Some(acceptor) => {
                            // A client that refuses our certificate ends here; that is
                            // what untrusted-certificate tests expect.
                            if let Ok(tls) = acceptor.accept(stream).await {
                                serve_connection(TokioIo::new(tls), behaviour).await;
                            }
                        }
                        None => serve_connection(TokioIo::new(stream), behaviour).await,
                    }
                });
            }
            // Reap finished connections so the set does not grow without bound.
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

async fn serve_connection<I>(io: I, behaviour: Arc<Behaviour>)
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let service = hyper::service::service_fn(move |req| respond(req, behaviour.clone()));
    // Errors here are clients hanging up mid-request, which tests do on purpose.
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(io, service)
        .await;
}

async fn respond(
    req: Request<Incoming>,
    behaviour: Arc<Behaviour>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    behaviour.hits.fetch_add(1, Ordering::SeqCst);
    let required = behaviour
        .required_authorization
        .lock()
        .expect("authorization lock")
        .clone();
    let authorized = required.is_none_or(|required| {
        req.headers()
            .get(hyper::header::AUTHORIZATION)
            .is_some_and(|given| given.as_bytes() == required.as_bytes())
    });
    let path_and_query = req
        .uri()
        .path_and_query()
        .map(|p| p.to_string())
        .unwrap_or_default();
    // Unless recorded, the request (and its unread body) lives until the
    // answer, as it always has.
    let _unread = if behaviour.recording.load(Ordering::SeqCst) {
        record(req, &behaviour).await;
        None
    } else {
        Some(req)
    };
    if !authorized {
        let mut response = Response::new(Full::new(Bytes::from_static(b"unauthorized")));
        *response.status_mut() = StatusCode::UNAUTHORIZED;
        response.headers_mut().insert(
            hyper::header::WWW_AUTHENTICATE,
            hyper::header::HeaderValue::from_static("Basic realm=\"target\""),
        );
        return Ok(response);
    }
    answer(&path_and_query, &behaviour).await
}

/// Keeps `req`, reading its whole body. A client that hangs up mid-body is
/// kept with the part received.
async fn record(req: Request<Incoming>, behaviour: &Behaviour) {
    let (parts, body) = req.into_parts();
    let body = match body.collect().await {
        Ok(collected) => collected.to_bytes().to_vec(),
        Err(_) => Vec::new(),
    };
    let received = ReceivedRequest {
        method: parts.method.to_string(),
        path: parts
            .uri
            .path_and_query()
            .map(|p| p.to_string())
            .unwrap_or_default(),
        headers: parts
            .headers
            .iter()
            .map(|(n, v)| {
                let value = String::from_utf8_lossy(v.as_bytes()).into_owned();
                (n.as_str().to_owned(), value)
            })
            .collect(),
        body,
    };
    let mut kept = behaviour.received.lock().expect("requests lock");
    if kept.len() == MAX_RECORDED {
        kept.pop_front();
    }
    kept.push_back(received);
}

/// The answer to a request for `path_and_query`.
async fn answer(
    path_and_query: &str,
    behaviour: &Behaviour,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let (path, query) = path_and_query
        .split_once('?')
        .unwrap_or((path_and_query, ""));
    if path == "/redirect-to" {
        let location = url::form_urlencoded::parse(query.as_bytes())
            .find(|(k, _)| k == "url")
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default();
        let response = Response::builder()
            .status(StatusCode::FOUND)
            .header("location", location)
            .body(Full::new(Bytes::new()))
            .expect("valid redirect response");
        return Ok(response);
    }
    let delay = Duration::from_millis(behaviour.delay_ms.load(Ordering::SeqCst));
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let status = StatusCode::from_u16(behaviour.status.load(Ordering::SeqCst))
        .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body = behaviour.body.lock().expect("body lock").clone();
    let mut response = Response::builder()
        .status(status)
        .header("content-type", "text/plain; charset=utf-8")
        .body(Full::new(Bytes::from(body)))
        .expect("valid response");
    let extra = behaviour
        .response_headers
        .lock()
        .expect("headers lock")
        .clone();
    let headers = response.headers_mut();
    for (name, _) in &extra {
        headers.remove(name.as_str());
    }
    for (name, value) in extra {
        let name = hyper::header::HeaderName::from_bytes(name.as_bytes()).expect("header name");
        let value = hyper::header::HeaderValue::from_str(&value).expect("header value");
        headers.append(name, value);
    }
    Ok(response)
}

/// A fresh CA and a leaf for 127.0.0.1 and localhost that it signed
/// (`tls_target`'s certificate maker).
fn tls_acceptor(not_after: DateTime<Utc>) -> (tokio_rustls::TlsAcceptor, TlsMaterial) {
    let leaf = crate::tls_target::LeafOptions::expiring_at(not_after);
    let (config, ca_pem, _leaf_der, not_after) = crate::tls_target::server_config(&leaf);
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    (acceptor, TlsMaterial { ca_pem, not_after })
}
