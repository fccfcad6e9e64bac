//! A loopback port where every connection is refused, for as long as the
//! guard lives.
//!
//! "A port that was just free" is not enough: once let go, the kernel hands
//! the same ephemeral port to the next test that binds port 0 (another
//! test's target, in the same run), and the connection that should be
//! refused reaches that server instead. A socket that is bound but never
//! listens keeps the port taken (it is bound without `SO_REUSEADDR`, so no
//! one else can bind it) and answers every SYN with a reset.

use std::net::SocketAddr;

pub struct RefusingPort {
    _socket: tokio::net::TcpSocket,
    pub port: u16,
}

impl RefusingPort {
    pub fn bind() -> Self {
        let socket = tokio::net::TcpSocket::new_v4().expect("a TCP socket");
        socket
            .bind(SocketAddr::from(([127, 0, 0, 1], 0)))
            .expect("bind a loopback port");
        let port = socket.local_addr().expect("its address").port();
        Self {
            _socket: socket,
            port,
        }
    }
}
