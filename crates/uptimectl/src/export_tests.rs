use super::*;

fn listed() -> Vec<(Kind, Vec<Value>)> {
    vec![
        (
            Kind::AlertContact,
            vec![
                json!({"id": 3, "ref": "oncall", "org_id": 1, "name": "PD", "type": "pagerduty",
                "value": "", "secret": "set", "verified": true, "created_at": "2026-01-01T00:00:00Z"}),
            ],
        ),
        (
            Kind::EscalationPolicy,
            vec![
                json!({"id": 9, "ref": null, "name": "night", "repeat_count": 0,
                "steps": [{"contact_ids": [3], "delay_secs": 0}]}),
            ],
        ),
        (
            Kind::Monitor,
            vec![
                json!({"id": 6, "ref": "web", "name": "web", "type": "http", "target": "https://example.com",
                    "interval_secs": 60, "status": "up", "alert_contact_ids": [3], "depends_on": [5],
                    "basic_auth": {"username": "u", "password_set": true}, "method": "GET", "headers": [],
                    "dns_server": null, "labels": {"team": "a"}, "heartbeat_token": null}),
                json!({"id": 5, "ref": null, "name": "core", "type": "tcp", "target": "example.com:22",
                    "alert_contact_ids": [], "depends_on": [], "basic_auth": null, "labels": {}}),
            ],
        ),
        (Kind::MaintenanceWindow, vec![]),
        (Kind::StatusPage, vec![]),
    ]
}

#[test]
fn responses_become_specs_with_refs_secrets_from_the_environment_and_no_server_fields() {
    let exported = convert(&listed());
    let contact = &exported[0].resources[0];
    assert_eq!(
        contact,
        &json!({"kind": "AlertContact", "ref": "oncall", "spec": {"name": "PD", "type": "pagerduty",
            "secret": {"from_env": "UPTIME_SECRET_ALERTCONTACT_ONCALL_SECRET"}}})
    );
    let policy = &exported[1].resources[0];
    assert_eq!(policy["ref"], "escalationpolicy-9");
    assert_eq!(
        policy["spec"]["steps"],
        json!([{"contact_refs": ["oncall"], "delay_secs": 0}])
    );
    let monitors = &exported[2].resources;
    // Sorted by ref; the one without a ref gets `monitor-<id>`.
    assert_eq!(monitors[0]["ref"], "monitor-5");
    assert_eq!(
        monitors[1]["spec"],
        json!({"name": "web", "type": "http", "target": "https://example.com", "interval_secs": 60,
            "alert_contact_refs": ["oncall"], "depends_on_refs": ["monitor-5"],
            "basic_auth": {"username": "u", "password": {"from_env": "UPTIME_SECRET_MONITOR_WEB_BASIC_AUTH_PASSWORD"}},
            "method": "GET", "headers": [], "labels": {"team": "a"}})
    );
    assert_eq!(
        monitors[0]["spec"],
        json!({"name": "core", "type": "tcp", "target": "example.com:22",
            "alert_contact_refs": [], "depends_on_refs": [], "labels": {}})
    );
}

#[test]
fn files_are_one_per_kind_and_read_back_as_the_same_resources() {
    let exported = convert(&listed());
    let dir = tempfile::tempdir().unwrap();
    let written = write_dir(dir.path(), &exported).unwrap();
    assert_eq!(written.len(), 3, "{written:?}");
    assert!(!dir.path().join("status-pages.yaml").exists());
    let env = |_: &str| Some("secret".to_string());
    let loaded = crate::resource_file::load(dir.path(), &env).unwrap();
    let labels: Vec<String> = loaded.iter().map(|r| r.label()).collect();
    assert_eq!(
        labels,
        [
            "AlertContact/oncall",
            "EscalationPolicy/escalationpolicy-9",
            "Monitor/monitor-5",
            "Monitor/web"
        ]
    );
    assert_eq!(loaded[3].spec["basic_auth"]["password"], "secret");

    // A kind that has no resources any more loses its file.
    let mut emptied = exported.clone();
    emptied[1].resources.clear();
    write_dir(dir.path(), &emptied).unwrap();
    assert!(!dir.path().join("escalation-policies.yaml").exists());
}

#[test]
fn a_scheduled_heartbeat_is_written_without_the_interval_it_stands_for() {
    let heartbeat = json!({"id": 8, "ref": "backup", "name": "Backup", "type": "heartbeat",
        "schedule": "0 3 * * *", "timezone": "UTC", "interval_secs": 86400, "timeout_secs": 120});
    let exported = convert(&[(Kind::Monitor, vec![heartbeat])]);
    assert_eq!(
        exported[0].resources[0]["spec"],
        json!({"name": "Backup", "type": "heartbeat", "schedule": "0 3 * * *", "timezone": "UTC",
            "timeout_secs": 120})
    );
}

#[test]
fn a_monitors_escalation_policy_is_written_by_ref_instead_of_its_empty_contacts() {
    let listed = [
        (
            Kind::EscalationPolicy,
            vec![
                json!({"id": 9, "ref": "night", "name": "Night", "repeat_count": 0,
                "steps": [{"contact_ids": [3], "delay_secs": 300}]}),
            ],
        ),
        (
            Kind::Monitor,
            vec![
                json!({"id": 6, "ref": "web", "name": "web", "type": "tcp", "target": "example.com:443",
                    "alert_contact_ids": [], "escalation_policy_id": 9}),
                json!({"id": 7, "ref": "db", "name": "db", "type": "tcp", "target": "example.com:5432",
                    "alert_contact_ids": [], "escalation_policy_id": null}),
            ],
        ),
    ];
    let exported = convert(&listed);
    let monitors = &exported[1].resources;
    assert_eq!(
        monitors[1]["spec"],
        json!({"name": "web", "type": "tcp", "target": "example.com:443",
            "escalation_policy_ref": "night"})
    );
    assert_eq!(
        monitors[0]["spec"],
        json!({"name": "db", "type": "tcp", "target": "example.com:5432",
            "alert_contact_refs": []})
    );
}

#[test]
fn sets_of_refs_are_sorted_by_ref_and_a_pages_monitors_keep_their_order() {
    let mut listed = listed();
    listed[3].1 = vec![json!({"id": 2, "ref": "w", "name": "W", "monitor_ids": [5, 6]})];
    listed[4].1 = vec![json!({"id": 4, "ref": "p", "slug": "p", "title": "P",
        "groups": [{"name": "G", "monitor_ids": [5, 6]}]})];
    let exported = convert(&listed);
    // `monitor-5` and `web` by id are [5, 6]; by ref `monitor-5` < `web`
    // as well, so the monitors get refs that sort the other way.
    let mut renamed = listed.clone();
    renamed[2].1[0]["ref"] = json!("a-web");
    let renamed = convert(&renamed);
    assert_eq!(
        exported[3].resources[0]["spec"]["monitor_refs"],
        json!(["monitor-5", "web"])
    );
    assert_eq!(
        renamed[3].resources[0]["spec"]["monitor_refs"],
        json!(["a-web", "monitor-5"])
    );
    assert_eq!(
        renamed[4].resources[0]["spec"]["groups"][0]["monitor_refs"],
        json!(["monitor-5", "a-web"])
    );
}

#[test]
fn a_redacted_webhook_url_is_exported_from_the_environment_and_a_plain_one_as_it_is() {
    let refs = HashMap::new();
    let slack = json!({"id": 4, "ref": "chat", "name": "Chat", "type": "slack",
        "value": "https://hooks.slack.com/services/T1/B2/[redacted]", "value_redacted": true,
        "verified": true});
    let spec = spec_of(Kind::AlertContact, "chat", &slack, &refs);
    assert_eq!(
        spec["value"],
        json!({"from_env": "UPTIME_SECRET_ALERTCONTACT_CHAT_VALUE"}),
        "{spec}"
    );
    assert!(spec.get("value_redacted").is_none(), "{spec}");
    let email = json!({"id": 5, "ref": "ops", "name": "Ops", "type": "email",
        "value": "ops@example.com", "verified": true});
    let spec = spec_of(Kind::AlertContact, "ops", &email, &refs);
    assert_eq!(spec["value"], "ops@example.com", "{spec}");
}
