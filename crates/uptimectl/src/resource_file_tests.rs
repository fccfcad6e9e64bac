use super::*;
use serde_json::json;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&path, text).unwrap();
    path
}

fn no_env(_: &str) -> Option<String> {
    None
}

fn problems(result: Result<Vec<Resource>, LoadError>) -> Vec<String> {
    result
        .expect_err("the files are refused")
        .problems
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn the_three_document_shapes_and_json_are_read_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "set.yaml",
        "kind: AlertContact\nref: oncall\nspec: {name: On call, type: webhook, value: 'https://example.com/hook'}\n\
---\n\
- kind: Monitor\n  ref: a\n  spec: {name: a, type: tcp, target: 'example.com:443'}\n\
- kind: Monitor\n  ref: b\n  spec: {name: b, type: tcp, target: 'example.com:443'}\n\
---\n\
resources:\n  - kind: Monitor\n    ref: c\n    spec: {name: c, type: tcp, target: 'example.com:443'}\n\
---\n",
    );
    let resources = load(&file, &no_env).unwrap();
    let labels: Vec<String> = resources.iter().map(Resource::label).collect();
    assert_eq!(
        labels,
        ["AlertContact/oncall", "Monitor/a", "Monitor/b", "Monitor/c"]
    );
    assert_eq!(resources[2].source.document, 2);
    assert_eq!(resources[2].source.item, Some(2));
    assert_eq!(
        resources[3].to_wire(),
        json!({"kind": "Monitor", "ref": "c", "spec": {"name": "c", "type": "tcp", "target": "example.com:443"}})
    );

    let json_file = write(
        dir.path(),
        "one.json",
        r#"{"kind": "Monitor", "ref": "j", "spec": {"name": "j", "type": "tcp", "target": "example.com:443"}}"#,
    );
    assert_eq!(load(&json_file, &no_env).unwrap()[0].reference, "j");
}

#[test]
fn a_directory_is_merged_by_path_and_a_ref_twice_names_both_files() {
    let dir = tempfile::tempdir().unwrap();
    let monitor = |r: &str| {
        format!(
            "kind: Monitor\nref: {r}\nspec: {{name: {r}, type: tcp, target: 'example.com:443'}}\n"
        )
    };
    write(dir.path(), "b/second.yml", &monitor("two"));
    write(dir.path(), "a.yaml", &monitor("one"));
    write(
        dir.path(),
        "c/d/third.json",
        r#"[{"kind": "Monitor", "ref": "three", "spec": {"name": "t", "type": "tcp", "target": "example.com:443"}}]"#,
    );
    write(dir.path(), "README.md", "not a resource file");
    let refs: Vec<String> = load(dir.path(), &no_env)
        .unwrap()
        .into_iter()
        .map(|r| r.reference)
        .collect();
    assert_eq!(refs, ["one", "two", "three"]);

    write(dir.path(), "z.yaml", &monitor("two"));
    let found = problems(load(dir.path(), &no_env));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("z.yaml: document 1 (Monitor/two): ref: defined twice"),
        "{found:?}"
    );
    assert!(found[0].contains("second.yml: document 1"), "{found:?}");
}

#[test]
fn every_problem_of_every_file_is_named_with_file_resource_and_field() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.yaml",
        "kind: Gadget\nref: g\nspec: {}\n---\nkind: Monitor\nref: Not_Valid\nspec: {name: x}\n---\n- kind: Monitor\n  ref: ok\n  spec: []\n  extra: 1\n",
    );
    write(dir.path(), "b.yaml", "kind: [unclosed\n");
    write(dir.path(), "c.json", "{\"resources\": 3}");
    let found = problems(load(dir.path(), &no_env)).join("\n");
    for expected in [
        "a.yaml: document 1 (Gadget/g): kind: must be one of AlertContact",
        "a.yaml: document 2 (Monitor/Not_Valid): ref: must be 1 to 255",
        "a.yaml: document 3, item 1 (Monitor/ok): spec: must be an object",
        "a.yaml: document 3, item 1 (Monitor/ok): extra: unknown field",
        "b.yaml: document 1: not valid YAML",
        "c.json: document 1: resources: must be a list",
    ] {
        assert!(found.contains(expected), "{expected} in\n{found}");
    }
    let error = load(dir.path(), &no_env).unwrap_err().to_string();
    assert!(
        error.starts_with("6 problems in the files; nothing was sent:"),
        "{error}"
    );
}

#[test]
fn secrets_come_from_the_environment_and_a_missing_variable_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "c.yaml",
        "kind: AlertContact\nref: pd\nspec: {name: PD, type: pagerduty, secret: {from_env: PD_KEY}}\n",
    );
    let env = |name: &str| (name == "PD_KEY").then(|| "routing-key".to_string());
    let resources = load(&file, &env).unwrap();
    assert_eq!(resources[0].spec["secret"], "routing-key");
    let found = problems(load(&file, &no_env));
    assert_eq!(
        found,
        ["c.yaml: document 1 (AlertContact/pd): spec.secret: the environment variable PD_KEY is not set"
            .replace("c.yaml", &file.display().to_string())]
    );
}

#[test]
fn an_empty_directory_or_a_missing_path_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    assert!(problems(load(dir.path(), &no_env))[0].contains("holds no .yaml"));
    assert!(problems(load(&dir.path().join("absent.yaml"), &no_env))[0].contains("cannot read"));
}

#[test]
fn field_paths_read_like_the_apis() {
    let segments: Vec<String> = ["spec", "headers", "[0]", "name"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(field_path(&segments), "spec.headers[0].name");
}
