//! A loopback HTTP server whose every answer is `500` with a body that never
//! ends: to show that a client reads only a bounded head of a body that a
//! remote chooses. It counts the body bytes it managed to hand to the kernel
//! and tells when a connection closed, so a test waits for that event and
//! then asserts how much was taken, never how long it took.
//!
//! A raw TCP server (no hyper): the answer has no `Content-Length` and is not
//! chunked, so the body runs until the client closes the connection.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tokio::task::JoinSet;

/// One write of the endless body.
const CHUNK: usize = 64 * 1024;

struct Counters {
    /// Body bytes written (accepted by the kernel) over all connections.
    written: AtomicU64,
    /// Connections that ended (the client closed, or a write failed).
    closed: AtomicU64,
    closed_notify: Notify,
}

/// A running server; it stops (with all its connections) when dropped.
pub struct EndlessBodyServer {
    addr: SocketAddr,
    counters: Arc<Counters>,
    _tasks: JoinSet<()>,
}

impl EndlessBodyServer {
    pub async fn start() -> Self {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .expect("bind a loopback port");
        let addr = listener.local_addr().expect("bound address");
        let counters = Arc::new(Counters {
            written: AtomicU64::new(0),
            closed: AtomicU64::new(0),
            closed_notify: Notify::new(),
        });
        let mut tasks = JoinSet::new();
        let shared = counters.clone();
        tasks.spawn(async move {
            let mut connections = JoinSet::new();
            while let Ok((stream, _)) = listener.accept().await {
                connections.spawn(serve(stream, shared.clone()));
            }
        });
        Self {
            addr,
            counters,
            _tasks: tasks,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Body bytes written so far, over every connection.
    pub fn bytes_written(&self) -> u64 {
        self.counters.written.load(Ordering::SeqCst)
    }

    /// Waits until `count` connections have ended; panics after `deadline`
    /// (a guard against a hung test, not a measurement).
    pub async fn wait_closed(&self, count: u64, deadline: Duration) {
        let wait = async {
            loop {
                let notified = self.counters.closed_notify.notified();
                if self.counters.closed.load(Ordering::SeqCst) >= count {
                    return;
                }
                notified.await;
            }
        };
        tokio::time::timeout(deadline, wait)
            .await
            .unwrap_or_else(|_| {
                panic!(
                "{count} connection(s) did not close within {deadline:?}; {} body bytes written",
                self.bytes_written()
            )
            });
    }
}

async fn serve(mut stream: tokio::net::TcpStream, counters: Arc<Counters>) {
    // Read the request head (enough to know a request came); its content
    // does not matter.
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 64 * 1024 {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return finish(&counters),
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    let answer = b"HTTP/1.1 500 Internal Server Error\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n";
    if stream.write_all(answer).await.is_err() {
        return finish(&counters);
    }
    let chunk = vec![b'x'; CHUNK];
    while stream.write_all(&chunk).await.is_ok() {
        counters.written.fetch_add(CHUNK as u64, Ordering::SeqCst);
    }
    finish(&counters)
}

fn finish(counters: &Counters) {
    counters.closed.fetch_add(1, Ordering::SeqCst);
    counters.closed_notify.notify_waiters();
}
