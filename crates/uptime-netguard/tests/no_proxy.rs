//! A client from `client_builder` never goes through an environment proxy,
//! which would resolve names itself and so bypass the screening resolver.
//! Its own test binary: reqwest reads the proxy environment once per process.

use std::net::SocketAddr;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use uptime_netguard::{client_builder, AddressPolicy};

/// A loopback HTTP server that answers every request with `body`.
async fn answering(body: &'static str) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let response = format!(
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
            });
        }
    });
    addr
}

async fn body_via(client: reqwest::Client, url: &str) -> String {
    client
        .get(url)
        .send()
        .await
        .expect("an answer")
        .text()
        .await
        .expect("a body")
}

#[tokio::test]
async fn environment_proxies_are_ignored() {
    let proxy = answering("proxied").await;
    let target = answering("direct").await;
    let proxy_url = format!("http://{proxy}");
    // Nothing else in this process reads the environment concurrently: this
    // binary holds this one test.
    for var in [
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
    ] {
        std::env::set_var(var, &proxy_url);
    }
    for var in ["NO_PROXY", "no_proxy"] {
        std::env::remove_var(var);
    }
    let url = format!("http://{target}/");

    // Positive control: an ordinary client does take the environment proxy.
    let ordinary = reqwest::Client::builder().build().unwrap();
    assert_eq!(body_via(ordinary, &url).await, "proxied");

    let policy = AddressPolicy::new(true, vec![], "checks may not reach");
    let screened = client_builder(&policy).build().unwrap();
    assert_eq!(body_via(screened, &url).await, "direct");
}
