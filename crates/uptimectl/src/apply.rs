//! `uptimectl apply` and `plan`: the files' resources sent to
//! `POST /api/v1/apply`, first as a dry run whose plan is shown as a diff
//! (`+` create, `~` update with each `field: before → after`, `-` delete,
//! unchanged counted), then, unless only a plan was asked for, applied.
//!
//! Deleting needs `--prune`, and a yes: `--yes`, or an answer at a
//! terminal's prompt; without a terminal and without `--yes` a plan that
//! deletes is refused. Exit codes: 0 nothing to change (or applied), 2
//! changes planned (plan, dry run), 1 an error.
//!
//! The server's per-resource errors (`errors: [{index, field, message}]`)
//! are told by file, document and resource, since `index` is the
//! resource's place in the request, which is the files' order.

use crate::client::{Client, ClientError};
use crate::resource_file::{LoadError, Resource};
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::time::Duration;

/// How long an apply may take: the server runs the whole set in one
/// transaction; 10,000 monitors take seconds, this leaves room for a busy
/// server.
pub const APPLY_TIMEOUT: Duration = Duration::from_secs(600);

#[derive(Debug, Clone, Copy, Default)]
pub struct ApplyOptions {
    /// Delete resources that carry a ref and are not in the files.
    pub prune: bool,
    /// Delete without asking.
    pub yes: bool,
    /// Plan only.
    pub dry_run: bool,
}

/// How a run ended (each an exit code).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// The tenant already is as the files say.
    NothingToChange,
    /// A plan (or dry run) with changes.
    ChangesPlanned,
    /// The changes were applied.
    Applied,
}

impl Ended {
    pub fn exit_code(self) -> u8 {
        match self {
            Ended::NothingToChange | Ended::Applied => 0,
            Ended::ChangesPlanned => 2,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error(transparent)]
    Files(#[from] LoadError),
    #[error(transparent)]
    Api(#[from] ClientError),
    /// The server refused resources; each line names file, resource and field.
    #[error("{status}: {message}; nothing was changed:{}", lines(.problems))]
    Rejected {
        status: u16,
        message: String,
        problems: Vec<String>,
    },
    #[error("the plan deletes {count} resource(s) and there is no terminal to ask: pass --yes to delete them")]
    DeletionNeedsYes { count: usize },
    #[error("not applied: deleting {count} resource(s) was not confirmed")]
    DeletionDeclined { count: usize },
}

fn lines(problems: &[String]) -> String {
    problems.iter().map(|p| format!("\n  {p}")).collect()
}

/// What a plan holds, counted from its entries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub create: usize,
    pub update: usize,
    pub unchanged: usize,
    /// Deletions that happen (`pruned: true`).
    pub delete: usize,
    /// Deletions listed without `--prune` (they do not happen).
    pub not_pruned: usize,
}

impl Counts {
    pub fn of(answer: &Value) -> Counts {
        let mut counts = Counts::default();
        for entry in entries(answer) {
            match entry["action"].as_str() {
                Some("create") => counts.create += 1,
                Some("update") => counts.update += 1,
                Some("unchanged") => counts.unchanged += 1,
                Some("delete") if entry["pruned"] == Value::Bool(false) => counts.not_pruned += 1,
                Some("delete") => counts.delete += 1,
                _ => {}
            }
        }
        counts
    }

    pub fn changes(&self) -> usize {
        self.create + self.update + self.delete
    }
}

fn entries(answer: &Value) -> impl Iterator<Item = &Value> {
    answer["plan"].as_array().into_iter().flatten()
}

/// The apply request.
pub fn request(resources: &[Resource], prune: bool, dry_run: bool) -> Value {
    let resources: Vec<Value> = resources.iter().map(Resource::to_wire).collect();
    json!({"resources": resources, "dry_run": dry_run, "prune": prune})
}

/// Sends the set; a refusal naming resources is told by file.
pub async fn send(
    client: &Client,
    resources: &[Resource],
    prune: bool,
    dry_run: bool,
) -> Result<Value, ApplyError> {
    let body = request(resources, prune, dry_run);
    match client
        .post_apply("/api/v1/apply", body, APPLY_TIMEOUT)
        .await
    {
        Ok(answer) => Ok(answer),
        Err(ClientError::Refused {
            status,
            message,
            body,
        }) if body["errors"].is_array() => Err(ApplyError::Rejected {
            status,
            message: body["error"].as_str().unwrap_or(&message).to_string(),
            problems: server_problems(&body, resources),
        }),
        Err(other) => Err(other.into()),
    }
}

/// Each of the server's `errors` as `file: document N (Kind/ref): field: message`.
pub fn server_problems(body: &Value, resources: &[Resource]) -> Vec<String> {
    body["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|error| {
            let field = error["field"].as_str().unwrap_or("?");
            let message = error["message"].as_str().unwrap_or("refused");
            let resource = error["index"]
                .as_u64()
                .and_then(|i| resources.get(i as usize));
            match resource {
                Some(resource) => format!(
                    "{} ({}): {field}: {message}",
                    resource.source,
                    resource.label()
                ),
                None => {
                    let kind = error["kind"].as_str().unwrap_or("?");
                    let reference = error["ref"].as_str().unwrap_or("?");
                    format!("{kind}/{reference}: {field}: {message}")
                }
            }
        })
        .collect()
}

/// The plan as a diff for people.
pub fn render_plan(answer: &Value) -> String {
    let mut out = String::new();
    for entry in entries(answer) {
        let label = format!(
            "{}/{}",
            entry["kind"].as_str().unwrap_or("?"),
            entry["ref"].as_str().unwrap_or("?")
        );
        let id = entry["id"]
            .as_i64()
            .map(|id| format!(" (id {id})"))
            .unwrap_or_default();
        match entry["action"].as_str() {
            Some("create") => {
                let _ = writeln!(out, "+ {label}{id}");
            }
            Some("update") => {
                let _ = writeln!(out, "~ {label}{id}");
                for change in entry["changes"].as_array().into_iter().flatten() {
                    let _ = writeln!(
                        out,
                        "    {}: {} → {}",
                        change["field"].as_str().unwrap_or("?"),
                        shown(&change["before"]),
                        shown(&change["after"])
                    );
                }
            }
            Some("delete") if entry["pruned"] == Value::Bool(false) => {
                let _ = writeln!(
                    out,
                    "- {label}{id} (not in the files; deleted only with --prune)"
                );
            }
            Some("delete") => {
                let _ = writeln!(out, "- {label}{id}");
            }
            _ => {}
        }
    }
    let counts = Counts::of(answer);
    let (c, u, d) = (counts.create, counts.update, counts.delete);
    let n = counts.unchanged;
    let _ = if answer["applied"] == Value::Bool(true) {
        write!(
            out,
            "Applied: {c} created, {u} updated, {d} deleted, {n} unchanged"
        )
    } else {
        write!(
            out,
            "Plan: {c} to create, {u} to update, {d} to delete, {n} unchanged"
        )
    };
    if counts.not_pruned > 0 {
        let _ = write!(
            out,
            " ({} not in the files, kept without --prune)",
            counts.not_pruned
        );
    }
    out.push('.');
    out
}

/// A value of a change: strings as they are, the rest as JSON.
fn shown(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The whole command: plans, shows the plan through `show` (told whether
/// it is the last answer, for outputs that take one document), asks
/// (through `confirm`, `None`: no terminal to ask at) before deleting,
/// applies and shows what was applied.
pub async fn run(
    client: &Client,
    resources: &[Resource],
    options: ApplyOptions,
    show: &mut dyn FnMut(&Value, bool),
    confirm: &mut dyn FnMut(&str) -> Option<bool>,
) -> Result<Ended, ApplyError> {
    let planned = send(client, resources, options.prune, true).await?;
    let counts = Counts::of(&planned);
    show(&planned, counts.changes() == 0 || options.dry_run);
    if counts.changes() == 0 {
        return Ok(Ended::NothingToChange);
    }
    if options.dry_run {
        return Ok(Ended::ChangesPlanned);
    }
    if counts.delete > 0 && !options.yes {
        let question = format!("Delete {} resource(s)? [y/N] ", counts.delete);
        match confirm(&question) {
            None => {
                return Err(ApplyError::DeletionNeedsYes {
                    count: counts.delete,
                })
            }
            Some(false) => {
                return Err(ApplyError::DeletionDeclined {
                    count: counts.delete,
                })
            }
            Some(true) => {}
        }
    }
    let applied = send(client, resources, options.prune, false).await?;
    show(&applied, true);
    Ok(Ended::Applied)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::Kind;
    use crate::resource_file::Source;
    use std::path::PathBuf;

    fn answer() -> Value {
        json!({"dry_run": true, "applied": false, "plan": [
            {"kind": "AlertContact", "ref": "oncall", "action": "create"},
            {"kind": "Monitor", "ref": "api", "action": "update", "id": 40, "changes": [
                {"field": "interval_secs", "before": 300, "after": 60},
                {"field": "name", "before": "API", "after": "Public API"}]},
            {"kind": "Monitor", "ref": "same", "action": "unchanged", "id": 41},
            {"kind": "Monitor", "ref": "old", "action": "delete", "id": 42, "pruned": true},
            {"kind": "Monitor", "ref": "kept", "action": "delete", "id": 43, "pruned": false},
        ]})
    }

    #[test]
    fn a_plan_reads_as_a_diff_with_counts() {
        assert_eq!(
            render_plan(&answer()),
            "+ AlertContact/oncall\n\
             ~ Monitor/api (id 40)\n    interval_secs: 300 → 60\n    name: API → Public API\n\
             - Monitor/old (id 42)\n\
             - Monitor/kept (id 43) (not in the files; deleted only with --prune)\n\
             Plan: 1 to create, 1 to update, 1 to delete, 1 unchanged (1 not in the files, kept without --prune)."
        );
        let counts = Counts::of(&answer());
        assert_eq!(counts.changes(), 3);
        let unchanged = json!({"plan": [{"kind": "Monitor", "ref": "a", "action": "unchanged", "id": 1},
            {"kind": "Monitor", "ref": "b", "action": "delete", "id": 2, "pruned": false}]});
        assert_eq!(Counts::of(&unchanged).changes(), 0);
        assert_eq!(Ended::ChangesPlanned.exit_code(), 2);
        assert_eq!(Ended::NothingToChange.exit_code(), 0);
    }

    #[test]
    fn server_errors_are_told_by_file_and_resource() {
        let resource = |r: &str, document| Resource {
            kind: Kind::Monitor,
            reference: r.into(),
            spec: json!({}),
            source: Source {
                file: PathBuf::from("m.yaml"),
                document,
                item: None,
            },
        };
        let resources = [resource("a", 1), resource("b", 2)];
        let body = json!({"error": "invalid request body", "errors": [
            {"index": 1, "kind": "Monitor", "ref": "b", "field": "spec.alert_contact_refs[0]", "message": "no AlertContact with ref x"},
            {"kind": "Monitor", "ref": "z", "field": "ref", "message": "taken"}]});
        assert_eq!(
            server_problems(&body, &resources),
            [
                "m.yaml: document 2 (Monitor/b): spec.alert_contact_refs[0]: no AlertContact with ref x",
                "Monitor/z: ref: taken"
            ]
        );
        assert_eq!(
            request(&resources[..1], true, false),
            json!({"resources": [{"kind": "Monitor", "ref": "a", "spec": {}}], "dry_run": false, "prune": true})
        );
    }
}
