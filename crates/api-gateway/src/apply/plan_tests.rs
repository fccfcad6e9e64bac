use super::*;
use serde_json::json;

fn key(kind: Kind, r: &str) -> Key {
    (kind, r.to_string())
}

#[test]
fn desired_resources_match_stored_ones_and_the_rest_are_absent_monitors_first() {
    let stored: Stored = [
        (key(Kind::AlertContact, "oncall"), 3),
        (key(Kind::AlertContact, "old-contact"), 4),
        (key(Kind::Monitor, "api"), 10),
        (key(Kind::Monitor, "old-b"), 12),
        (key(Kind::Monitor, "old-a"), 11),
    ]
    .into_iter()
    .collect();
    let desired = vec![
        key(Kind::Monitor, "web"),
        key(Kind::Monitor, "api"),
        key(Kind::AlertContact, "oncall"),
        // The same ref of another kind is another resource.
        key(Kind::Monitor, "oncall"),
    ];
    let matching = match_resources(&desired, &stored);
    assert_eq!(matching.existing, vec![None, Some(10), Some(3), None]);
    assert_eq!(
        matching.absent,
        vec![
            (key(Kind::Monitor, "old-a"), 11),
            (key(Kind::Monitor, "old-b"), 12),
            (key(Kind::AlertContact, "old-contact"), 4),
        ]
    );
}

#[test]
fn a_repeated_kind_and_ref_is_found() {
    let desired = vec![
        key(Kind::Monitor, "a"),
        key(Kind::AlertContact, "a"),
        key(Kind::Monitor, "a"),
    ];
    assert_eq!(duplicates(&desired), vec![2]);
}

#[test]
fn refs_resolve_to_stored_ids_or_to_placeholders_of_the_request() {
    let stored: Stored = [
        (key(Kind::AlertContact, "oncall"), 3),
        (key(Kind::AlertContact, "pruned"), 5),
    ]
    .into_iter()
    .collect();
    let desired = vec![
        key(Kind::AlertContact, "new-contact"),
        key(Kind::Monitor, "api"),
    ];
    let table = RefTable::new(&stored, &[(key(Kind::AlertContact, "pruned"), 5)], &desired);
    let spec =
        json!({"name": "API", "alert_contact_refs": ["oncall", "new-contact"], "ref": "api"});
    let resolved = resolved_spec(Kind::Monitor, "api", &spec, &table).unwrap();
    assert_eq!(
        resolved,
        json!({"name": "API", "alert_contact_ids": [3, -1]})
    );

    let mut table = table;
    table.created(key(Kind::AlertContact, "new-contact"), 42);
    let resolved = resolved_spec(Kind::Monitor, "api", &spec, &table).unwrap();
    assert_eq!(resolved["alert_contact_ids"], json!([3, 42]));

    // A contact the apply deletes, one nowhere, both forms, a bad form.
    let bad = json!({"alert_contact_refs": ["pruned", "nowhere"], "depends_on_refs": "api",
        "depends_on": [1], "ref": "other"});
    let problems = resolved_spec(Kind::Monitor, "api", &bad, &table).unwrap_err();
    let fields: Vec<&str> = problems.iter().map(|p| p.field.as_str()).collect();
    assert_eq!(
        fields,
        vec![
            "spec.ref",
            "spec.alert_contact_refs",
            "spec.alert_contact_refs",
            "spec.depends_on_refs"
        ]
    );
    assert!(problems[1].message.contains("\"pruned\""));
    assert!(resolved_spec(Kind::Monitor, "api", &json!([1]), &table).is_err());
    // Contacts have no ref forms: the field stays for the body to refuse.
    let contact = json!({"name": "x", "alert_contact_refs": ["a"]});
    assert_eq!(
        resolved_spec(Kind::AlertContact, "c", &contact, &table).unwrap(),
        contact
    );
}

#[test]
fn monitors_are_written_after_those_they_depend_on_else_in_request_order() {
    let monitors = vec![
        (
            "app".to_string(),
            vec!["db".to_string(), "outside".to_string()],
        ),
        ("web".to_string(), vec![]),
        ("db".to_string(), vec!["switch".to_string()]),
        ("switch".to_string(), vec![]),
    ];
    assert_eq!(creation_order(&monitors), Ok(vec![1, 3, 2, 0]));
    let cycle = vec![
        ("a".to_string(), vec!["b".to_string()]),
        ("b".to_string(), vec!["a".to_string()]),
        ("c".to_string(), vec![]),
    ];
    assert_eq!(creation_order(&cycle), Err(vec![0, 1]));
    assert_eq!(
        depends_on_refs(&json!({"depends_on_refs": ["a", "b"]})),
        vec!["a", "b"]
    );
}

#[test]
fn refs_inside_lists_and_a_single_policy_ref_resolve_naming_their_place() {
    let stored: Stored = [
        (key(Kind::AlertContact, "oncall"), 3),
        (key(Kind::Monitor, "api"), 10),
        (key(Kind::EscalationPolicy, "escalate"), 7),
    ]
    .into_iter()
    .collect();
    let table = RefTable::new(&stored, &[], &[key(Kind::Monitor, "web")]);
    let policy = json!({"name": "p", "steps": [{"contact_refs": ["oncall"], "delay_secs": 60},
        {"contact_ids": [4], "delay_secs": 60}]});
    assert_eq!(
        resolved_spec(Kind::EscalationPolicy, "p", &policy, &table).unwrap()["steps"],
        json!([{"contact_ids": [3], "delay_secs": 60}, {"contact_ids": [4], "delay_secs": 60}])
    );
    let page = json!({"slug": "s", "groups": [{"name": "g", "monitor_refs": ["api", "web"]},
        {"name": "h", "monitor_refs": ["nowhere"]}]});
    let problems = resolved_spec(Kind::StatusPage, "s", &page, &table).unwrap_err();
    assert_eq!(problems[0].field, "spec.groups[1].monitor_refs");
    let window = json!({"name": "w", "monitor_refs": ["api", "web"]});
    assert_eq!(
        resolved_spec(Kind::MaintenanceWindow, "w", &window, &table).unwrap()["monitor_ids"],
        json!([10, -1])
    );
    let monitor = json!({"name": "m", "escalation_policy_ref": "escalate"});
    assert_eq!(
        resolved_spec(Kind::Monitor, "m", &monitor, &table).unwrap(),
        json!({"name": "m", "escalation_policy_id": 7})
    );
    let none = json!({"name": "m", "escalation_policy_ref": null});
    assert_eq!(
        resolved_spec(Kind::Monitor, "m", &none, &table).unwrap(),
        json!({"name": "m", "escalation_policy_id": null})
    );
    let unknown = json!({"escalation_policy_ref": "gone"});
    let problems = resolved_spec(Kind::Monitor, "m", &unknown, &table).unwrap_err();
    assert_eq!(problems[0].field, "spec.escalation_policy_ref");
}
