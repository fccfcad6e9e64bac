//! A panic in any task ends the process with a logged ERROR line; a
//! contained one does not. Each case runs in a child process: this test
//! binary run again with `UPTIME_PANIC_CHILD` naming the case, so the
//! child sets up telemetry exactly as a service's `main` does.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use uptime_config::TelemetrySettings;

const CHILD: &str = "UPTIME_PANIC_CHILD";
/// A child still running this long after starting did not exit on its panic.
const CHILD_DEADLINE: Duration = Duration::from_secs(30);

/// The child's side: does nothing unless run as a child.
#[test]
fn child() {
    let Ok(case) = std::env::var(CHILD) else {
        return;
    };
    let _telemetry = uptime_telemetry::init("panic-test", &TelemetrySettings::default()).unwrap();
    uptime_telemetry::exit_on_panic("panic-test");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        match case.as_str() {
            // The scheduler's crash: a task panics, `main` goes on waiting.
            "task" => {
                tokio::spawn(async { panic!("boom in a task") });
                std::future::pending::<()>().await;
            }
            // A panic in contained work reaches its caller; the process lives.
            "contained" => {
                let task = tokio::spawn(uptime_telemetry::contain_async(async {
                    panic!("boom contained")
                }));
                assert!(task.await.unwrap_err().is_panic());
                let caught = std::panic::catch_unwind(|| {
                    uptime_telemetry::contain(|| panic!("boom contained, blocking"))
                });
                assert!(caught.is_err());
                tracing::info!("the child is still running");
            }
            other => unreachable!("unknown case {other}"),
        }
    });
}

/// Runs the child case; its exit code and its JSON log lines.
fn run_child(case: &str) -> (Option<i32>, Vec<serde_json::Value>) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child", "--nocapture", "--test-threads", "1"])
        .env(CHILD, case)
        .env_remove("RUST_BACKTRACE")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > CHILD_DEADLINE {
            child.kill().unwrap();
            child.wait().unwrap();
            let mut out = String::new();
            child
                .stdout
                .take()
                .unwrap()
                .read_to_string(&mut out)
                .unwrap();
            panic!("the child kept running after its panic (a zombie); its output:\n{out}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    // The test harness starts the first line with "test child ... ".
    let lines = out
        .lines()
        .filter_map(|line| serde_json::from_str(&line[line.find('{')?..]).ok())
        .collect();
    (status.code(), lines)
}

#[test]
fn a_panic_in_a_task_is_logged_and_ends_the_process() {
    let (code, lines) = run_child("task");
    let line = lines
        .iter()
        .find(|l| l["panic"] == "boom in a task")
        .unwrap_or_else(|| panic!("no panic line in {lines:?}"));
    assert_eq!(line["level"], "ERROR");
    assert_eq!(
        line["message"],
        "panicked; exiting so that a supervisor restarts the service"
    );
    let location = line["location"].as_str().unwrap();
    assert!(
        location.starts_with("crates/uptime-telemetry/tests/panic_exit.rs:"),
        "{location}"
    );
    assert_eq!(line["service"], "panic-test");
    assert_eq!(code, Some(uptime_telemetry::PANIC_EXIT_CODE));
}

#[test]
fn a_contained_panic_is_logged_and_the_process_goes_on() {
    let (code, lines) = run_child("contained");
    let contained: Vec<_> = lines
        .iter()
        .filter(|l| l["message"] == "panicked in contained work; its caller handles it")
        .map(|l| l["panic"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(contained, ["boom contained", "boom contained, blocking"]);
    assert!(
        lines
            .iter()
            .any(|l| l["message"] == "the child is still running"),
        "{lines:?}"
    );
    assert_eq!(code, Some(0), "{lines:?}");
}
