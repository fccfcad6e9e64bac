//! Who holds which key, as the docs state it, held to the code: a service
//! holds the sealing keys when it builds a keyring from its settings
//! (`Keyring::from_settings`, which only a direct dependent of
//! `uptime-secrets` can call; both are read here and must agree), and the
//! acknowledge-link secret when it builds `AckLinks::from_settings`.
//! Checked against them:
//! - docs/architecture.md's table `| key | configuration | held by | ...`;
//! - docs/operations.md: the "used by" cell of each `UPTIME_SECRETS__*`
//!   row, and the services a section heading names (`### ack_links
//!   (notifier and api-gateway)`);
//! - the chart: the components it gives the sealing keys to.

use super::architecture::{workspace_graph, SERVICES};
use super::doc_markdown::{backticked, read, root, tables, tables_headed};
use std::collections::BTreeSet;
use std::path::Path;

/// A key some services hold.
struct Key {
    name: &'static str,
    /// What its configuration cell names (an environment variable or its
    /// prefix).
    env: &'static str,
    /// Its configuration section, as operations.md's headings name it.
    section: &'static str,
    /// The call by which a service takes the key from its settings.
    built_by: &'static str,
    /// The crate a holder must depend on directly, if there is one.
    crate_name: Option<&'static str>,
    /// The flag of the chart's `uptime.secretEnv` that passes it.
    chart_flag: Option<&'static str>,
}

const KEYS: [Key; 2] = [
    Key {
        name: "sealing keys",
        env: "UPTIME_SECRETS__",
        section: "secrets",
        built_by: "Keyring::from_settings",
        crate_name: Some("uptime-secrets"),
        chart_flag: Some("sealing"),
    },
    Key {
        name: "acknowledge-link secret",
        env: "UPTIME_ACK_LINKS__SECRET",
        section: "ack_links",
        built_by: "AckLinks::from_settings",
        crate_name: None,
        chart_flag: None,
    },
];

type Services = BTreeSet<String>;

fn rust_sources(dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(std::fs::read_to_string(&path).unwrap());
        }
    }
}

/// The services whose own code (`crates/<service>/src`) calls `call`.
fn calling(call: &str) -> Services {
    SERVICES
        .iter()
        .filter(|service| {
            let mut sources = Vec::new();
            rust_sources(
                &root().join("crates").join(service).join("src"),
                &mut sources,
            );
            sources.iter().any(|s| s.contains(call))
        })
        .map(|s| s.to_string())
        .collect()
}

/// The services that depend on `crate_name` directly.
fn depending_on(crate_name: &str) -> Services {
    let (graph, _) = workspace_graph();
    SERVICES
        .iter()
        .filter(|s| graph[**s].contains(crate_name))
        .map(|s| s.to_string())
        .collect()
}

/// The service names in `text` (backticked or plain, as whole words).
fn services_named(text: &str) -> Services {
    let words: BTreeSet<&str> = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .collect();
    SERVICES
        .iter()
        .filter(|s| words.contains(**s))
        .map(|s| s.to_string())
        .collect()
}

/// The holders of each key, from the code.
fn holders() -> Vec<(&'static Key, Services)> {
    KEYS.iter().map(|k| (k, calling(k.built_by))).collect()
}

/// Where docs/architecture.md's key table (`text`) disagrees with `holders`.
fn architecture_problems(text: &str, holders: &[(&Key, Services)]) -> Vec<String> {
    let page = "docs/architecture.md";
    let tables = tables_headed(text, &["key", "configuration", "held by"]);
    let [table] = &tables[..] else {
        return vec![format!(
            "{page}: {} tables headed `| key | configuration | held by |`, one wanted",
            tables.len()
        )];
    };
    let mut problems = Vec::new();
    for (key, holders) in holders {
        let rows: Vec<_> = table
            .rows
            .iter()
            .filter(|r| r.cells.get(1).is_some_and(|c| c.contains(key.env)))
            .collect();
        let [row] = &rows[..] else {
            problems.push(format!(
                "{page}:{}: {} rows for the {} (`{}`), one wanted",
                table.line,
                rows.len(),
                key.name,
                key.env
            ));
            continue;
        };
        let said: Services = row
            .cells
            .get(2)
            .map(|c| services_named(&backticked(c).join(" ")))
            .unwrap_or_default();
        if &said != holders {
            problems.push(format!(
                "{page}:{}: the {} are held by {said:?} says the page; the code: {holders:?}",
                row.line, key.name
            ));
        }
    }
    problems
}

/// Where docs/operations.md (`text`) disagrees with `holders`: the "used
/// by" cells of the keys' variables, and the services a section's heading
/// names.
fn operations_problems(text: &str, holders: &[(&Key, Services)]) -> Vec<String> {
    let page = "docs/operations.md";
    let mut problems = Vec::new();
    for (key, holders) in holders {
        for table in tables(text) {
            let Some(used_by) = table.header.iter().position(|h| h == "used by") else {
                continue;
            };
            for row in &table.rows {
                let names_key = row
                    .cells
                    .first()
                    .and_then(|c| backticked(c).first().copied())
                    .is_some_and(|v| v.starts_with(key.env));
                let said = services_named(row.cells.get(used_by).map_or("", String::as_str));
                if names_key && &said != holders {
                    problems.push(format!(
                        "{page}:{}: {} used by {said:?} says the page; the code: {holders:?}",
                        row.line, key.env
                    ));
                }
            }
        }
        let heading = format!("### {} (", key.section);
        for (i, line) in text.lines().enumerate() {
            if line.starts_with(&heading) && &services_named(line) != holders {
                problems.push(format!("{page}:{}: {line:?}: the code: {holders:?}", i + 1));
            }
        }
    }
    problems
}

#[test]
fn a_service_holds_the_sealing_keys_exactly_when_it_depends_on_uptime_secrets() {
    for (key, holders) in holders() {
        assert!(!holders.is_empty(), "nobody calls {}", key.built_by);
        if let Some(crate_name) = key.crate_name {
            assert_eq!(
                holders,
                depending_on(crate_name),
                "the services calling {} against those depending on {crate_name}",
                key.built_by
            );
        }
    }
}

#[test]
fn the_docs_name_the_services_that_hold_each_key() {
    let holders = holders();
    let mut problems = architecture_problems(&read("docs/architecture.md"), &holders);
    problems.extend(operations_problems(&read("docs/operations.md"), &holders));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_chart_gives_the_sealing_keys_to_their_holders_only() {
    let template = read("deploy/helm/uptime/templates/deployments.yaml");
    for (key, holders) in holders() {
        let Some(flag) = key.chart_flag else { continue };
        let pattern = format!("\"{flag}\" (has $component (list ");
        let at = template
            .find(&pattern)
            .unwrap_or_else(|| panic!("deployments.yaml passes no `{flag}`"));
        let list = &template[at + pattern.len()..];
        let list = &list[..list.find(')').unwrap()];
        assert_eq!(
            services_named(list),
            holders,
            "the components the chart gives the {} (`{flag}`)",
            key.name
        );
    }
}

#[test]
fn the_key_rules_see_a_wrong_holder() {
    // Positive control: the sentence and the config rows as they were, and
    // a holder the page leaves out.
    let sealing: Services = ["api-gateway", "checker", "notifier"]
        .map(String::from)
        .into();
    let acks: Services = ["api-gateway", "notifier"].map(String::from).into();
    let holders = [(&KEYS[0], sealing), (&KEYS[1], acks)];
    let old = "| key | configuration | held by |\n| --- | --- | --- |\n\
               | sealing | `UPTIME_SECRETS__*` | `api-gateway` (seals), `checker` (opens) |\n";
    let problems = architecture_problems(old, &holders).join("\n");
    assert!(
        problems.contains("the sealing keys are held by"),
        "{problems}"
    );
    assert!(
        problems.contains("0 rows for the acknowledge-link secret"),
        "{problems}"
    );
    let ops = "| variable | default | used by | meaning |\n| --- | --- | --- | --- |\n\
               | `UPTIME_SECRETS__CURRENT_KEY_ID` | empty | api-gateway, checker | the id |\n\n\
               ### ack_links (notifier)\n";
    let problems = operations_problems(ops, &holders);
    assert_eq!(problems.len(), 2, "{problems:#?}");
}
