//! A three-node NATS JetStream cluster on loopback for one test: each node
//! a `nats-server` child with its own store directory, client and route
//! ports picked free at start (and kept, so a killed node comes back where
//! it was). [`TestNatsCluster::start`] returns once the cluster accepts a
//! stream replicated on all three nodes: a meta leader exists and every
//! node has joined.
//!
//! Every route between two nodes goes through a [`TcpProxy`] of its own
//! (one per direction: node a dials b through proxy a→b), so
//! [`TestNatsCluster::partition`] can cut one node off from the other two
//! and [`TestNatsCluster::heal`] join it again. The nodes advertise a route
//! address nothing listens on, so no node learns a direct way around the
//! proxies from another's gossip (an implicit route to it fails at once and
//! is not retried; the configured routes, through the proxies, are).

use crate::proxy::TcpProxy;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use uptime_config::NatsSettings;

/// Nodes of the cluster (JetStream's usual replica count).
pub const CLUSTER_NODES: usize = 3;
/// How long a cluster may take to form (three servers, one election).
const FORM_TIMEOUT: Duration = Duration::from_secs(60);
/// The route address every node advertises: port 1 on loopback, where
/// nothing listens (see the module comment).
const UNREACHABLE_ROUTE: &str = "127.0.0.1:1";

struct Node {
    name: String,
    client_port: u16,
    config: PathBuf,
    child: Option<Child>,
}

/// A running cluster; every node is killed when it is dropped.
pub struct TestNatsCluster {
    bin: String,
    nodes: Vec<Node>,
    /// `(from, to, proxy)`: the path node `from` dials node `to` through.
    paths: Vec<(usize, usize, TcpProxy)>,
    _store: tempfile::TempDir,
}

/// A loopback port free right now (the OS picks it; the listener is closed
/// before the server binds it, a window no test has lost a race in).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

impl TestNatsCluster {
    pub async fn start() -> Self {
        crate::init_test_logging();
        let bin =
            std::env::var(crate::nats::NATS_SERVER_ENV).unwrap_or_else(|_| "nats-server".into());
        let store = tempfile::tempdir().expect("temp dir for the cluster");
        let route_ports: Vec<u16> = (0..CLUSTER_NODES).map(|_| free_port()).collect();
        let mut paths = Vec::new();
        for from in 0..CLUSTER_NODES {
            for (to, port) in route_ports.iter().enumerate().filter(|(to, _)| *to != from) {
                let proxy = TcpProxy::start(*port).await.expect("a route proxy");
                paths.push((from, to, proxy));
            }
        }
        let mut nodes = Vec::new();
        for (index, route_port) in route_ports.iter().enumerate() {
            let name = format!("n{index}");
            let dir = store.path().join(&name);
            std::fs::create_dir_all(&dir).expect("node store dir");
            let client_port = free_port();
            let routes: Vec<String> = paths
                .iter()
                .filter(|(from, _, _)| *from == index)
                .map(|(_, _, proxy)| format!("\"nats-route://127.0.0.1:{}\"", proxy.port()))
                .collect();
            // The store limits as in `TestNats` (a reservation independent
            // of the free disk).
            let config = dir.join("nats.conf");
            std::fs::write(
                &config,
                format!(
                    "server_name: {name}\nlisten: \"127.0.0.1:{client_port}\"\n\
                     jetstream {{ store_dir: \"{store}\", max_file_store: 64GB, max_memory_store: 1GB }}\n\
                     cluster {{ name: uptime-test, listen: \"127.0.0.1:{route_port}\", \
                     advertise: \"{UNREACHABLE_ROUTE}\", routes: [{routes}] }}\n",
                    store = dir.join("js").display(),
                    routes = routes.join(", "),
                ),
            )
            .expect("write the node's config");
            nodes.push(Node {
                name,
                client_port,
                config,
                child: None,
            });
        }
        let mut cluster = Self {
            bin,
            nodes,
            paths,
            _store: store,
        };
        for index in 0..CLUSTER_NODES {
            cluster.spawn(index).await;
        }
        cluster.wait_formed().await;
        cluster
    }

    async fn spawn(&mut self, index: usize) {
        let node = &mut self.nodes[index];
        let mut child = Command::new(&self.bin)
            .arg("-c")
            .arg(&node.config)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("start {} (run the tests with `just test`): {e}", self.bin));
        let stderr = child.stderr.take().expect("piped stderr");
        let mut lines = BufReader::new(stderr).lines();
        let name = node.name.clone();
        tokio::time::timeout(Duration::from_secs(10), async {
            while let Some(line) = lines.next_line().await.expect("read nats-server log") {
                if line.contains("Listening for client connections on ") {
                    return;
                }
            }
            panic!("nats-server {name} exited before listening");
        })
        .await
        .unwrap_or_else(|_| panic!("nats-server {} did not start within 10 s", node.name));
        // Keep draining the log so the server never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        node.child = Some(child);
    }

    /// Waits until a stream replicated on every node can be created.
    async fn wait_formed(&self) {
        let client = async_nats::connect(self.url_list())
            .await
            .expect("connect to the test cluster");
        let js = async_nats::jetstream::new(client);
        let started = Instant::now();
        let probe = async_nats::jetstream::stream::Config {
            name: "CLUSTER_PROBE".into(),
            subjects: vec!["cluster.probe".into()],
            num_replicas: CLUSTER_NODES,
            storage: async_nats::jetstream::stream::StorageType::Memory,
            ..Default::default()
        };
        loop {
            match js.create_stream(probe.clone()).await {
                Ok(_) => {
                    let _ = js.delete_stream("CLUSTER_PROBE").await;
                    return;
                }
                Err(error) => {
                    assert!(
                        started.elapsed() < FORM_TIMEOUT,
                        "the NATS cluster did not form within {FORM_TIMEOUT:?}: {error}"
                    );
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
        }
    }

    fn url_list(&self) -> Vec<String> {
        self.nodes
            .iter()
            .map(|n| format!("nats://127.0.0.1:{}", n.client_port))
            .collect()
    }

    /// Every node's URL, comma separated (what `UPTIME_NATS__URL` takes).
    pub fn url(&self) -> String {
        self.url_list().join(",")
    }

    /// Settings for the services: every node, streams and buckets on all three.
    pub fn settings(&self) -> NatsSettings {
        NatsSettings {
            url: self.url(),
            stream_replicas: CLUSTER_NODES,
            ..NatsSettings::default()
        }
    }

    /// A client (connected to any node) with the project's streams created.
    pub async fn jetstream(&self) -> (async_nats::Client, async_nats::jetstream::Context) {
        let client = async_nats::connect(self.url_list())
            .await
            .expect("connect to the test cluster");
        let js = async_nats::jetstream::new(client.clone());
        uptime_contracts::streams::ensure(&js, &self.settings())
            .await
            .expect("create streams");
        (client, js)
    }

    /// Kills node `index` with SIGKILL (no lame duck, no flush): a crash.
    pub async fn kill(&mut self, index: usize) {
        if let Some(mut child) = self.nodes[index].child.take() {
            child.start_kill().expect("SIGKILL the node");
            let _ = child.wait().await;
        }
    }

    /// Starts a killed node again, on its ports and store.
    pub async fn restart(&mut self, index: usize) {
        assert!(self.nodes[index].child.is_none(), "node {index} is running");
        self.spawn(index).await;
    }

    /// The index of the node a server names itself by (`n0`..`n2`, as in
    /// a stream's cluster info).
    pub fn index_of(&self, server_name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name == server_name)
    }

    /// Cuts node `index` off from the other two: every route to or from it
    /// is dropped and refused until [`Self::heal`]. Its clients stay
    /// connected to it (a partition between servers, not from the clients).
    pub fn partition(&self, index: usize) {
        for (from, to, proxy) in &self.paths {
            if *from == index || *to == index {
                proxy.cut();
            }
        }
    }

    /// Lets every route through again.
    pub fn heal(&self) {
        for (_, _, proxy) in &self.paths {
            proxy.heal();
        }
    }

    /// Nodes running now.
    pub fn running(&self) -> usize {
        self.nodes.iter().filter(|n| n.child.is_some()).count()
    }
}
