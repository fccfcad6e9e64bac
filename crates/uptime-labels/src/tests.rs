use super::*;

fn labels(pairs: &[(&str, &str)]) -> Labels {
    Labels(
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    )
}

#[test]
fn keys_follow_kubernetes_syntax() {
    for good in [
        "env",
        "team",
        "a",
        "app.kubernetes.io/name",
        "example.com/x_y-z.1",
        "A1",
        &"n".repeat(63),
    ] {
        assert_eq!(check_key(good), Ok(()), "{good}");
    }
    assert_eq!(check_key(""), Err(LabelError::EmptyKey));
    assert_eq!(check_key(&"n".repeat(64)), Err(LabelError::BadKeyName));
    for bad_name in ["-env", "env-", "e nv", "é", "a/", "x/y/z"] {
        assert!(check_key(bad_name).is_err(), "{bad_name}");
    }
    assert_eq!(check_key("Example.com/x"), Err(LabelError::BadPrefix));
    assert_eq!(check_key("/x"), Err(LabelError::BadPrefix));
    assert_eq!(check_key("a..b/x"), Err(LabelError::BadPrefix));
    let long_prefix = format!("{}/x", vec!["a".repeat(63); 4].join("."));
    assert_eq!(check_key(&long_prefix), Err(LabelError::BadPrefix));
}

#[test]
fn values_may_be_empty_and_are_bounded() {
    assert_eq!(check_value(""), Ok(()));
    assert_eq!(check_value("prod"), Ok(()));
    assert_eq!(check_value("v1.2_3-x"), Ok(()));
    assert_eq!(check_value(&"v".repeat(64)), Err(LabelError::BadValue));
    assert_eq!(check_value("a b"), Err(LabelError::BadValue));
    assert_eq!(check_value("prod-"), Err(LabelError::BadValue));
}

#[test]
fn problems_name_the_key_or_value_and_the_count() {
    let ok = labels(&[("env", "prod"), ("team", "payments")]);
    assert!(ok.problems().is_empty());
    let bad = labels(&[("env", "pr od"), ("-x", "y")]);
    assert_eq!(
        bad.problems(),
        vec![
            (Where::Key("-x".into()), LabelError::BadKeyName),
            (Where::Value("env".into()), LabelError::BadValue),
        ]
    );
    let many = Labels(
        (0..=MAX_LABELS)
            .map(|i| (format!("k{i}"), "v".to_string()))
            .collect(),
    );
    assert_eq!(many.problems(), vec![(Where::All, LabelError::TooMany)]);
}

#[test]
fn selectors_match_all_their_terms() {
    let monitor = labels(&[("env", "prod"), ("team", "payments")]);
    let parse = |t: &[&str]| Selector::parse_terms(t.iter().copied()).unwrap();
    assert!(parse(&[]).matches(&monitor));
    assert!(parse(&["env=prod"]).matches(&monitor));
    assert!(parse(&["env=prod", "team=payments"]).matches(&monitor));
    assert!(!parse(&["env=prod", "team=search"]).matches(&monitor));
    assert!(!parse(&["tier="]).matches(&monitor));
    assert_eq!(
        Selector::parse_terms(["env"]),
        Err((0, LabelError::BadTerm))
    );
    assert_eq!(
        Selector::parse_terms(["env=prod", "env=dev"]),
        Err((1, LabelError::BadTerm))
    );
    assert_eq!(
        Selector::parse_terms(["env=prod", "x y=1"]),
        Err((1, LabelError::BadKeyName))
    );
    assert_eq!(
        parse(&["team=payments", "env=prod"]).to_string(),
        "env=prod,team=payments"
    );
}

#[test]
fn a_selector_is_within_a_wider_one() {
    let parse = |t: &[&str]| Selector::parse_terms(t.iter().copied()).unwrap();
    let team = parse(&["team=payments"]);
    assert!(parse(&["team=payments", "env=prod"]).within(&team));
    assert!(team.within(&team));
    assert!(team.within(&Selector::default()));
    assert!(!parse(&["env=prod"]).within(&team));
    assert!(!Selector::default().within(&team));
}

#[test]
fn stored_form_round_trips() {
    let l = labels(&[("team", "payments"), ("env", "prod")]);
    assert_eq!(
        l.to_json(),
        serde_json::json!({"env": "prod", "team": "payments"})
    );
    assert_eq!(Labels::from_json(&l.to_json()), l);
    assert_eq!(Labels::from_json(&serde_json::json!([1])), Labels::new());
    assert_eq!(l.to_string(), "env=prod, team=payments");
}
