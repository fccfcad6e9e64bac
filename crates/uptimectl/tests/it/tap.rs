use async_nats::HeaderMap;
use futures::StreamExt;
use uptime_testkit::TestNats;
use uptimectl::schemas::Schemas;
use uptimectl::tap::{trace_id_of, Tapped, Verdict};

const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// A valid state-changed example from proto-schemas, as a publisher sends it.
fn example(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../proto-schemas/examples/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn headers() -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert("traceparent", TRACEPARENT);
    h.insert("Nats-Msg-Id", "abc");
    h
}

#[test]
fn every_live_version_has_a_schema_and_a_subject_finds_it() {
    let schemas = Schemas::load().expect("schemas compile");
    for version in uptime_contracts::versions::VERSIONS
        .iter()
        .filter(|v| v.status.is_live())
    {
        let found = schemas.for_subject(version.subject).map(|s| s.name.clone());
        assert_eq!(found, Some(version.schema_name()), "{}", version.subject);
    }
    // Per-region due checks and dead letters follow their base subject.
    let due = uptime_contracts::versions::live("check-due")
        .last()
        .unwrap();
    let regional = format!("{}.eu-west", due.subject);
    assert_eq!(
        schemas.for_subject(&regional).map(|s| s.name.clone()),
        Some(due.schema_name())
    );
    let dead = format!("uptime.dead.{regional}");
    assert_eq!(
        schemas.for_subject(&dead).map(|s| s.name.clone()),
        Some(due.schema_name())
    );
    // A subject that only starts like one is not it.
    assert!(schemas.for_subject(&format!("{}x", due.subject)).is_none());
    assert!(schemas
        .for_subject("$KV.uptime_checkers.default.a")
        .is_none());
}

#[test]
fn a_message_is_checked_against_its_schema() {
    let schemas = Schemas::load().unwrap();
    let current = uptime_contracts::versions::live("state-changed")
        .last()
        .unwrap();
    let payload = example(&current.schema_name());
    let tapped = Tapped::read(&schemas, current.subject, Some(&headers()), &payload);
    assert_eq!(tapped.verdict, Verdict::Valid, "{}", tapped.body);
    assert_eq!(tapped.schema, Some(current.schema_name()));
    assert_eq!(
        tapped.trace_id.as_deref(),
        Some("4bf92f3577b34da6a3ce929d0e0e4736")
    );
    assert_eq!(tapped.headers, vec![("Nats-Msg-Id".into(), "abc".into())]);

    // The same message without a field its schema requires.
    let mut json: serde_json::Value = serde_json::from_slice(&payload).unwrap();
    json.as_object_mut().unwrap().remove("event_id");
    let broken = serde_json::to_vec(&json).unwrap();
    let tapped = Tapped::read(&schemas, current.subject, None, &broken);
    match &tapped.verdict {
        Verdict::Invalid(errors) => {
            assert!(errors.iter().any(|e| e.contains("event_id")), "{errors:?}")
        }
        other => panic!("expected invalid, got {other:?}"),
    }
    assert!(tapped.render(chrono::Utc::now()).contains("INVALID"));

    let tapped = Tapped::read(&schemas, current.subject, None, b"not json");
    assert!(matches!(tapped.verdict, Verdict::NotJson(_)));
}

#[test]
fn trace_ids_are_read_only_from_well_formed_traceparents() {
    assert_eq!(
        trace_id_of(TRACEPARENT).as_deref(),
        Some("4bf92f3577b34da6a3ce929d0e0e4736")
    );
    assert_eq!(trace_id_of("00-xyz-00f067aa0ba902b7-01"), None);
    assert_eq!(
        trace_id_of(&format!("00-{}-00f067aa0ba902b7-01", "0".repeat(32))),
        None
    );
    assert_eq!(trace_id_of(""), None);
}

/// The binary itself, on a real server: it prints the message a publisher
/// sent, checked, with its trace id, and stops after `--count`.
#[tokio::test]
async fn the_binary_taps_a_real_server() {
    let nats = TestNats::start().await;
    let current = uptime_contracts::versions::live("state-changed")
        .last()
        .unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_uptimectl"))
        .args(["tap", "uptime.>", "--count", "1", "--nats", &nats.url])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("uptimectl runs");

    // Publish until the tap has subscribed (it says so on stderr first).
    let client = async_nats::connect(&nats.url).await.unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = tokio_util_lines(stderr);
    let first = lines.next().await.expect("the tap announces itself");
    assert!(first.starts_with("tapping uptime.>"), "{first}");
    // The announcement follows the subscribe, but the server may see the
    // SUB a moment later: publish on every tick until the tap has shown its
    // one message and exited.
    let payload = example(&current.schema_name());
    let mut tick = tokio::time::interval(std::time::Duration::from_millis(20));
    let status = loop {
        tokio::select! {
            status = child.wait() => break status.unwrap(),
            _ = tick.tick() => {
                client
                    .publish_with_headers(current.subject, headers(), payload.clone().into())
                    .await
                    .unwrap();
            }
        }
    };
    assert!(status.success(), "{status}");
    let mut text = String::new();
    tokio::io::AsyncReadExt::read_to_string(&mut child.stdout.take().unwrap(), &mut text)
        .await
        .unwrap();
    assert!(text.contains(current.subject), "{text}");
    assert!(
        text.contains(&format!("valid {}", current.schema_name())),
        "{text}"
    );
    assert!(
        text.contains("trace 4bf92f3577b34da6a3ce929d0e0e4736"),
        "{text}"
    );
}

fn tokio_util_lines(
    stderr: tokio::process::ChildStderr,
) -> impl futures::Stream<Item = String> + Unpin {
    use tokio::io::AsyncBufReadExt;
    let lines = tokio::io::BufReader::new(stderr).lines();
    Box::pin(futures::stream::unfold(lines, |mut lines| async move {
        lines.next_line().await.ok().flatten().map(|l| (l, lines))
    }))
}
