//! [`DnsServer`]: a real authoritative DNS server (hickory-server) on
//! 127.0.0.1, UDP and TCP on one port the system picks, serving the zones a
//! test gives it, to point dns checks at.
//!
//! What it answers: records of its zones; NXDOMAIN for an unknown name in a
//! zone (NOERROR with no records for a known name without the type asked);
//! REFUSED for names outside every zone. To make it fail: a zone built with
//! [`Zone::failing`] answers every query with SERVFAIL or REFUSED, and
//! [`DnsServer::fail_all`] makes the whole server do so until reset.
//!
//! ```ignore
//! let server = DnsServer::start(vec![
//!     Zone::new("example.test").record("www", Record::A("192.0.2.1".parse().unwrap())),
//!     Zone::failing("broken.test", Failure::ServFail),
//! ]).await;
//! // query server.addr() for www.example.test.
//! ```

use hickory_server::authority::{Catalog, MessageResponseBuilder, ZoneType};
use hickory_server::proto::op::{Header, ResponseCode};
use hickory_server::proto::rr::rdata::{A, AAAA, CNAME, MX, NS, SOA, TXT};
use hickory_server::proto::rr::{LowerName, Name, RData, Record as WireRecord};
use hickory_server::server::{Request, RequestHandler, ResponseHandler, ResponseInfo};
use hickory_server::store::in_memory::InMemoryAuthority;
use hickory_server::ServerFuture;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Time to live of every record served; irrelevant to checks, which must
/// not cache.
const TTL: u32 = 300;

/// One record's data.
#[derive(Debug, Clone)]
pub enum Record {
    A(Ipv4Addr),
    Aaaa(Ipv6Addr),
    /// The canonical name (absolute if it ends in a dot, else relative to
    /// the zone).
    Cname(String),
    /// Preference and exchange (a name, as for `Cname`).
    Mx(u16, String),
    /// The record's character strings (each at most 255 bytes).
    Txt(Vec<String>),
    /// A name server's name (as for `Cname`).
    Ns(String),
}

/// How a failing zone or server answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    ServFail,
    Refused,
}

impl Failure {
    fn code(self) -> ResponseCode {
        match self {
            Failure::ServFail => ResponseCode::ServFail,
            Failure::Refused => ResponseCode::Refused,
        }
    }
}

/// A zone the server is authoritative for.
#[derive(Debug, Clone)]
pub struct Zone {
    origin: Name,
    records: Vec<(Name, Record)>,
    failure: Option<Failure>,
}

impl Zone {
    /// An empty zone (it gets its SOA record when served). Panics on an
    /// invalid name: tests write them.
    pub fn new(origin: &str) -> Self {
        let mut origin = Name::from_utf8(origin).expect("zone origin is a DNS name");
        origin.set_fqdn(true);
        Self {
            origin,
            records: Vec::new(),
            failure: None,
        }
    }

    /// A zone whose every query is answered with `failure`.
    pub fn failing(origin: &str, failure: Failure) -> Self {
        Self {
            failure: Some(failure),
            ..Self::new(origin)
        }
    }

    /// Adds `record` at `name`: `@` for the origin, a name relative to the
    /// origin (`www`), or an absolute one (ending in a dot). Several records
    /// of one type at one name form one record set.
    pub fn record(mut self, name: &str, record: Record) -> Self {
        let name = self.name(name);
        self.records.push((name, record));
        self
    }

    fn name(&self, name: &str) -> Name {
        if name == "@" {
            return self.origin.clone();
        }
        let parsed = Name::from_utf8(name).expect("record name is a DNS name");
        if parsed.is_fqdn() {
            parsed
        } else {
            parsed
                .append_domain(&self.origin)
                .expect("record name fits in a DNS name")
        }
    }

    fn rdata(&self, record: &Record) -> RData {
        match record {
            Record::A(ip) => RData::A(A(*ip)),
            Record::Aaaa(ip) => RData::AAAA(AAAA(*ip)),
            Record::Cname(name) => RData::CNAME(CNAME(self.name(name))),
            Record::Mx(preference, exchange) => {
                RData::MX(MX::new(*preference, self.name(exchange)))
            }
            Record::Txt(strings) => RData::TXT(TXT::new(strings.clone())),
            Record::Ns(name) => RData::NS(NS(self.name(name))),
        }
    }

    fn authority(&self) -> InMemoryAuthority {
        let mut authority = InMemoryAuthority::empty(self.origin.clone(), ZoneType::Primary, false);
        let soa = SOA::new(
            self.name("ns"),
            self.name("hostmaster"),
            1,
            3600,
            600,
            86400,
            60,
        );
        authority.upsert_mut(
            WireRecord::from_rdata(self.origin.clone(), TTL, RData::SOA(soa)),
            1,
        );
        for (name, record) in &self.records {
            authority.upsert_mut(
                WireRecord::from_rdata(name.clone(), TTL, self.rdata(record)),
                1,
            );
        }
        authority
    }
}

/// A running DNS server; stops when dropped.
pub struct DnsServer {
    addr: SocketAddr,
    state: Arc<State>,
    server: ServerFuture<Handler>,
}

/// What the handler and the test share.
#[derive(Default)]
struct State {
    queries: AtomicUsize,
    /// 0: answer; else a [`Failure`] (1 SERVFAIL, 2 REFUSED).
    fail_all: AtomicU8,
}

impl DnsServer {
    /// Serves `zones` on 127.0.0.1, UDP and TCP on the same free port.
    pub async fn start(zones: Vec<Zone>) -> Self {
        crate::init_test_logging();
        let mut catalog = Catalog::new();
        let mut failing = Vec::new();
        for zone in &zones {
            let origin = LowerName::new(&zone.origin);
            match zone.failure {
                Some(failure) => failing.push((origin, failure)),
                None => catalog.upsert(origin, vec![Arc::new(zone.authority())]),
            }
        }
        let state = Arc::new(State::default());
        let handler = Handler {
            catalog,
            failing,
            state: state.clone(),
        };
        let (udp, tcp) = bind_pair().await;
        let addr = udp.local_addr().expect("udp socket address");
        let mut server = ServerFuture::new(handler);
        server.register_socket(udp);
        server.register_listener(tcp, Duration::from_secs(10));
        Self {
            addr,
            state,
            server,
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Queries received so far (over UDP and TCP, answered or not).
    pub fn queries(&self) -> usize {
        self.state.queries.load(Ordering::SeqCst)
    }

    /// From now on every query is answered with `failure`; `None` answers
    /// normally again.
    pub fn fail_all(&self, failure: Option<Failure>) {
        let code = match failure {
            None => 0,
            Some(Failure::ServFail) => 1,
            Some(Failure::Refused) => 2,
        };
        self.state.fail_all.store(code, Ordering::SeqCst);
    }
}

impl Drop for DnsServer {
    fn drop(&mut self) {
        self.server.shutdown_token().cancel();
    }
}

/// A UDP socket and a TCP listener on one port of 127.0.0.1. The UDP port is
/// the system's pick; another process may hold its TCP twin, so try again.
async fn bind_pair() -> (tokio::net::UdpSocket, tokio::net::TcpListener) {
    let mut last_error = None;
    for _ in 0..20 {
        let udp = tokio::net::UdpSocket::bind("127.0.0.1:0")
            .await
            .expect("bind a udp socket on loopback");
        let addr = udp.local_addr().expect("udp socket address");
        match tokio::net::TcpListener::bind(addr).await {
            Ok(tcp) => return (udp, tcp),
            Err(e) => last_error = Some(e),
        }
    }
    panic!("no port free for both udp and tcp on loopback: {last_error:?}");
}

struct Handler {
    catalog: Catalog,
    failing: Vec<(LowerName, Failure)>,
    state: Arc<State>,
}

impl Handler {
    fn failure_for(&self, request: &Request) -> Option<Failure> {
        match self.state.fail_all.load(Ordering::SeqCst) {
            1 => return Some(Failure::ServFail),
            2 => return Some(Failure::Refused),
            _ => {}
        }
        let info = request.request_info().ok()?;
        let name = info.query.name();
        self.failing
            .iter()
            .find(|(origin, _)| origin.zone_of(name))
            .map(|(_, failure)| *failure)
    }
}

#[async_trait::async_trait]
impl RequestHandler for Handler {
    async fn handle_request<R: ResponseHandler>(
        &self,
        request: &Request,
        mut response_handle: R,
    ) -> ResponseInfo {
        self.state.queries.fetch_add(1, Ordering::SeqCst);
        let Some(failure) = self.failure_for(request) else {
            return self.catalog.handle_request(request, response_handle).await;
        };
        let response = MessageResponseBuilder::from_message_request(request)
            .error_msg(request.header(), failure.code());
        match response_handle.send_response(response).await {
            Ok(info) => info,
            Err(_) => {
                let mut header = Header::response_from_request(request.header());
                header.set_response_code(ResponseCode::ServFail);
                header.into()
            }
        }
    }
}
