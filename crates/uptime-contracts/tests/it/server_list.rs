//! `UPTIME_NATS__URL` may name several servers, comma separated (every node
//! of a cluster): the client connects to one that answers, so a node that is
//! down at start (or later) stops nothing.

use std::time::Duration;
use uptime_contracts::bus;
use uptime_testkit::TestNats;

#[tokio::test]
async fn a_comma_separated_url_connects_to_a_server_that_answers() {
    let nats = TestNats::start().await;
    // A port nothing listens on: the first "node" is down.
    let down = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let mut settings = nats.settings();
    settings.url = format!("nats://127.0.0.1:{down}, {}", nats.url);

    let (_client, js) = bus::connect(&settings, "server-list-test")
        .await
        .expect("a list of servers is one setting, not a parse error");
    tokio::time::timeout(Duration::from_secs(10), js.query_account())
        .await
        .expect("connected within 10 s")
        .expect("JetStream answers through the server that is up");
}
