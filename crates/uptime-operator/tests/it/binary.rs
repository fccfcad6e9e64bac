//! The `uptime-operator` binary as a user runs it.

#[test]
fn print_crds_prints_every_crd() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_uptime-operator"))
        .arg("--print-crds")
        .output()
        .expect("the binary runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("name: monitors.uptime.dev"), "{text}");
    assert!(text.contains("name: alertcontacts.uptime.dev"), "{text}");
}

#[test]
fn serve_refuses_to_start_without_an_api_key() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_uptime-operator"))
        .arg("serve")
        .env_remove("UPTIME_OPERATOR__API_KEY")
        .env("UPTIME_TELEMETRY__LOG_FORMAT", "pretty")
        .output()
        .expect("the binary runs");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("UPTIME_OPERATOR__API_KEY"), "{stderr}");
}
