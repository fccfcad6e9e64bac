//! A TCP proxy on loopback that can be cut and healed: the network path
//! between two NATS nodes in [`crate::TestNatsCluster`], so a test can
//! partition a node without iptables or a network namespace.
//!
//! [`TcpProxy::cut`] drops every open connection and refuses new ones (each
//! accepted at once and closed, which the dialer sees as a reset route);
//! [`TcpProxy::heal`] lets new connections through again.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

struct PathState {
    cut: AtomicBool,
    /// Bumped by every cut: open connections end when it changes.
    cuts: watch::Sender<u64>,
}

/// A running proxy; it stops accepting when dropped (open connections end
/// with their peers).
pub struct TcpProxy {
    port: u16,
    state: Arc<PathState>,
    accept: tokio::task::JoinHandle<()>,
}

impl TcpProxy {
    /// Listens on a free loopback port and forwards each connection to
    /// `127.0.0.1:upstream_port`.
    pub async fn start(upstream_port: u16) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let state = Arc::new(PathState {
            cut: AtomicBool::new(false),
            cuts: watch::channel(0).0,
        });
        let accept = tokio::spawn(accept_loop(listener, upstream_port, state.clone()));
        Ok(Self {
            port,
            state,
            accept,
        })
    }

    /// The port dialers connect to.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Drops every open connection and refuses new ones until [`Self::heal`].
    pub fn cut(&self) {
        self.state.cut.store(true, Ordering::SeqCst);
        self.state.cuts.send_modify(|n| *n += 1);
    }

    /// Lets new connections through again.
    pub fn heal(&self) {
        self.state.cut.store(false, Ordering::SeqCst);
    }

    pub fn is_cut(&self) -> bool {
        self.state.cut.load(Ordering::SeqCst)
    }
}

impl Drop for TcpProxy {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

async fn accept_loop(listener: TcpListener, upstream_port: u16, state: Arc<PathState>) {
    while let Ok((mut inbound, _)) = listener.accept().await {
        if state.cut.load(Ordering::SeqCst) {
            drop(inbound);
            continue;
        }
        // Subscribed before the upstream connect, so a cut during it ends
        // this connection too.
        let mut cuts = state.cuts.subscribe();
        let state = state.clone();
        tokio::spawn(async move {
            let Ok(mut upstream) = TcpStream::connect(("127.0.0.1", upstream_port)).await else {
                return;
            };
            if state.cut.load(Ordering::SeqCst) {
                return;
            }
            tokio::select! {
                _ = tokio::io::copy_bidirectional(&mut inbound, &mut upstream) => {}
                _ = cuts.changed() => {}
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn echo_server() -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((mut conn, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let (mut r, mut w) = conn.split();
                    let _ = tokio::io::copy(&mut r, &mut w).await;
                });
            }
        });
        port
    }

    async fn round_trip(conn: &mut TcpStream) -> std::io::Result<()> {
        conn.write_all(b"ping").await?;
        let mut buf = [0u8; 4];
        conn.read_exact(&mut buf).await?;
        assert_eq!(&buf, b"ping");
        Ok(())
    }

    #[tokio::test]
    async fn a_cut_drops_open_connections_and_refuses_new_ones_until_healed() {
        let proxy = TcpProxy::start(echo_server().await).await.unwrap();
        let mut open = TcpStream::connect(("127.0.0.1", proxy.port()))
            .await
            .unwrap();
        round_trip(&mut open).await.unwrap();

        proxy.cut();
        let mut buf = [0u8; 1];
        let read = open.read(&mut buf).await;
        assert!(matches!(read, Ok(0) | Err(_)), "the open connection ends");
        let mut during = TcpStream::connect(("127.0.0.1", proxy.port()))
            .await
            .unwrap();
        assert!(
            round_trip(&mut during).await.is_err(),
            "a new one is refused"
        );

        proxy.heal();
        let mut after = TcpStream::connect(("127.0.0.1", proxy.port()))
            .await
            .unwrap();
        round_trip(&mut after).await.unwrap();
    }
}
