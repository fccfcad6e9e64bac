//! The invariants of docs/architecture.md that the dependency graph can
//! show, checked from `cargo metadata`:
//! - no service crate depends on another service crate;
//! - libraries (`uptime-*`) never depend on a service crate;
//! - the checker, which is stateless, links no database driver.
//!
//! `system-tests` is exempt: it is the harness that runs every service.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

pub(super) const SERVICES: [&str; 6] = [
    "api-gateway",
    "scheduler",
    "checker",
    "recorder",
    "notifier",
    "status-pages",
];
const DATABASE_DRIVERS: [&str; 4] = ["diesel", "diesel-async", "tokio-postgres", "uptime-db"];

/// Each workspace package's normal (non-dev, non-build) dependencies, by name.
pub(super) type Graph = BTreeMap<String, BTreeSet<String>>;

pub(super) fn workspace_graph() -> (Graph, Value) {
    let output = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: Value = serde_json::from_slice(&output.stdout).expect("metadata is JSON");
    let members: BTreeSet<&str> = metadata["workspace_members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    let mut graph = Graph::new();
    for package in metadata["packages"].as_array().unwrap() {
        if !members.contains(package["id"].as_str().unwrap()) {
            continue;
        }
        let deps = package["dependencies"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["kind"].is_null())
            .map(|d| d["name"].as_str().unwrap().to_string())
            .collect();
        graph.insert(package["name"].as_str().unwrap().to_string(), deps);
    }
    (graph, metadata)
}

/// Every breach of the service/library layering in `graph`.
fn layering_violations(graph: &Graph) -> Vec<String> {
    let mut found = Vec::new();
    for (name, deps) in graph {
        let is_service = SERVICES.contains(&name.as_str());
        let is_library = name.starts_with("uptime-");
        for dep in deps.iter().filter(|d| SERVICES.contains(&d.as_str())) {
            if is_service {
                found.push(format!("service {name} depends on service {dep}"));
            } else if is_library {
                found.push(format!("library {name} depends on service {dep}"));
            }
        }
    }
    found
}

/// The packages `root` links (normal dependencies, transitively), from the
/// resolved graph of `cargo metadata`.
fn linked_by(metadata: &Value, root: &str) -> BTreeSet<String> {
    let nodes = metadata["resolve"]["nodes"].as_array().unwrap();
    let name_of: BTreeMap<&str, &str> = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p["name"].as_str().unwrap()))
        .collect();
    let edges: BTreeMap<&str, Vec<&str>> = nodes
        .iter()
        .map(|n| {
            let normal = n["deps"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| {
                    d["dep_kinds"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|k| k["kind"].is_null())
                })
                .map(|d| d["pkg"].as_str().unwrap())
                .collect();
            (n["id"].as_str().unwrap(), normal)
        })
        .collect();
    let start = name_of
        .iter()
        .find(|(_, name)| **name == root)
        .map(|(id, _)| *id)
        .expect("root package");
    let mut seen = BTreeSet::new();
    let mut todo = vec![start];
    while let Some(id) = todo.pop() {
        if seen.insert(id) {
            todo.extend(edges.get(id).into_iter().flatten().copied());
        }
    }
    seen.into_iter().map(|id| name_of[id].to_string()).collect()
}

#[test]
fn services_never_depend_on_services_and_libraries_never_on_services() {
    let (graph, _) = workspace_graph();
    for service in SERVICES {
        assert!(
            graph.contains_key(service),
            "{service} is a workspace member"
        );
    }
    let found = layering_violations(&graph);
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn the_layering_rule_sees_a_breach() {
    // Positive control: the rule is not vacuous.
    let mut graph = Graph::new();
    graph.insert("checker".into(), ["recorder".to_string()].into());
    graph.insert("uptime-ops".into(), ["notifier".to_string()].into());
    graph.insert("system-tests".into(), ["checker".to_string()].into());
    assert_eq!(
        layering_violations(&graph),
        vec![
            "service checker depends on service recorder".to_string(),
            "library uptime-ops depends on service notifier".to_string(),
        ]
    );
}

#[test]
fn the_checker_links_no_database_driver() {
    let (_, metadata) = workspace_graph();
    let linked = linked_by(&metadata, "checker");
    assert!(
        linked.contains("async-nats"),
        "the walk finds real dependencies"
    );
    let drivers: Vec<&str> = DATABASE_DRIVERS
        .into_iter()
        .filter(|d| linked.contains(*d))
        .collect();
    assert!(drivers.is_empty(), "the checker links {drivers:?}");
    // Positive control: the recorder does.
    assert!(linked_by(&metadata, "recorder").contains("diesel"));
}
