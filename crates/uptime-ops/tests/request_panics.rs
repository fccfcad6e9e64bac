//! A service exits on a panic (`uptime_telemetry::exit_on_panic`), except in
//! a public server's request handling behind
//! [`uptime_ops::contain_request_panics`]: one request's bug must not stop
//! the server for everyone. Each case runs in a child process (this test
//! binary again, `UPTIME_REQUEST_PANIC_CHILD` naming the case) set up as a
//! service's `main` is.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const CHILD: &str = "UPTIME_REQUEST_PANIC_CHILD";
const DEADLINE: Duration = Duration::from_secs(30);

async fn panics() -> actix_web::HttpResponse {
    panic!("boom in a request")
}

async fn fine() -> actix_web::HttpResponse {
    actix_web::HttpResponse::Ok().body("fine")
}

/// The child's side: does nothing unless run as a child.
#[test]
fn child() {
    let Ok(case) = std::env::var(CHILD) else {
        return;
    };
    let settings = uptime_config::TelemetrySettings::default();
    let _telemetry = uptime_telemetry::init("panic-test", &settings).unwrap();
    uptime_telemetry::exit_on_panic("panic-test");
    let contained = case == "contained";
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async move {
        let server = actix_web::HttpServer::new(move || {
            let app = actix_web::App::new()
                .route("/panic", actix_web::web::get().to(panics))
                .route("/fine", actix_web::web::get().to(fine));
            // The same app either way; only the middleware differs.
            app.wrap(actix_web::middleware::Condition::new(
                contained,
                actix_web::middleware::from_fn(uptime_ops::contain_request_panics),
            ))
        })
        .workers(1)
        .disable_signals()
        .bind("127.0.0.1:0")
        .unwrap();
        println!("PORT {}", server.addrs()[0].port());
        server.run().await.unwrap();
    });
}

/// Starts the child case; its process and its stdout lines as they come.
fn start(case: &str) -> (Child, mpsc::Receiver<String>, u16) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child", "--nocapture", "--test-threads", "1"])
        .env(CHILD, case)
        .env_remove("RUST_BACKTRACE")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (lines_tx, lines) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines_tx.send(line).is_err() {
                break;
            }
        }
    });
    let port = loop {
        let line = lines
            .recv_timeout(DEADLINE)
            .expect("the child printed its port");
        if let Some(port) = line.split("PORT ").nth(1) {
            break port.trim().parse().unwrap();
        }
    };
    (child, lines, port)
}

/// The first JSON log line saying that `boom in a request` panicked.
fn panic_line(lines: &mpsc::Receiver<String>) -> serde_json::Value {
    loop {
        let line = lines.recv_timeout(DEADLINE).expect("a panic line");
        let Some(start) = line.find('{') else {
            continue;
        };
        if let Ok(json) = serde_json::from_str::<serde_json::Value>(&line[start..]) {
            if json["panic"] == "boom in a request" {
                return json;
            }
        }
    }
}

#[tokio::test]
async fn a_panic_in_a_contained_request_leaves_the_server_serving() {
    let (mut child, lines, port) = start("contained");
    let client = reqwest::Client::new();
    // The worker dies with the request: no answer to it.
    assert!(client
        .get(format!("http://127.0.0.1:{port}/panic"))
        .send()
        .await
        .is_err());
    let line = panic_line(&lines);
    assert_eq!(line["level"], "ERROR");
    assert_eq!(
        line["message"],
        "panicked in contained work; its caller handles it"
    );
    // actix-web replaces the worker; the next request is answered.
    let started = Instant::now();
    let answered = loop {
        match client
            .get(format!("http://127.0.0.1:{port}/fine"))
            .send()
            .await
        {
            Ok(res) => break res,
            Err(e) if started.elapsed() < DEADLINE => {
                let _ = e;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(e) => panic!("the server stopped answering: {e}"),
        }
    };
    assert_eq!(answered.status(), 200);
    assert!(child.try_wait().unwrap().is_none(), "the process lives on");
    child.kill().unwrap();
    child.wait().unwrap();
}

#[tokio::test]
async fn without_the_middleware_a_panic_in_a_request_ends_the_process() {
    let (mut child, lines, port) = start("uncontained");
    let _ = reqwest::get(format!("http://127.0.0.1:{port}/panic")).await;
    let line = panic_line(&lines);
    assert_eq!(
        line["message"],
        "panicked; exiting so that a supervisor restarts the service"
    );
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < DEADLINE,
            "still running after its panic"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(status.code(), Some(uptime_telemetry::PANIC_EXIT_CODE));
}
