//! The file format of `apply`, `plan` and `export`: YAML (one or several
//! `---` documents) or JSON, each document one resource `{kind, ref, spec}`,
//! a list of them, or `{resources: [...]}`. A directory is read
//! recursively (`*.yaml`, `*.yml`, `*.json`, sorted by path) and merged; the
//! same kind and ref twice is an error naming both places. A secret may be
//! `{from_env: VAR}`, resolved here before anything is sent.
//!
//! Every problem of every file is collected (not only the first), each
//! naming the file, the document (and item of a list), the resource and the
//! field, so that one run shows all there is to fix; any problem fails the
//! whole set before anything reaches the API.

use crate::kinds::{is_valid_ref, Kind};
use crate::resource_schema::{field_path, SpecValidators};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// Where a resource was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub file: PathBuf,
    /// 1-based: the YAML document (a JSON file is one document).
    pub document: usize,
    /// 1-based: the item of a list (or of `resources`), if it is in one.
    pub item: Option<usize>,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}: document {}", self.file.display(), self.document)?;
        if let Some(item) = self.item {
            write!(f, ", item {item}")?;
        }
        Ok(())
    }
}

/// One resource as the files say it, secrets resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Resource {
    pub kind: Kind,
    pub reference: String,
    pub spec: Value,
    pub source: Source,
}

impl Resource {
    /// `Monitor/payments-api`.
    pub fn label(&self) -> String {
        format!("{}/{}", self.kind.name(), self.reference)
    }

    /// As the apply request carries it.
    pub fn to_wire(&self) -> Value {
        serde_json::json!({"kind": self.kind.name(), "ref": self.reference, "spec": self.spec})
    }
}

/// One thing wrong with the files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The file, and where in it when known.
    pub place: String,
    /// `Monitor/payments-api` when known.
    pub resource: Option<String>,
    /// `spec.interval_secs` when known.
    pub field: Option<String>,
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}", self.place)?;
        if let Some(resource) = &self.resource {
            write!(f, " ({resource})")?;
        }
        if let Some(field) = &self.field {
            write!(f, ": {field}")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Why the files cannot be applied: every problem found.
#[derive(Debug, thiserror::Error)]
pub struct LoadError {
    pub problems: Vec<Problem>,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let count = self.problems.len();
        write!(
            f,
            "{count} problem{} in the files; nothing was sent:",
            if count == 1 { "" } else { "s" }
        )?;
        for problem in &self.problems {
            write!(f, "\n  {problem}")?;
        }
        Ok(())
    }
}

/// Reads `path` (a file or a directory), checks every resource against the
/// file format's schema, resolves `{from_env}` through `env`, and returns
/// the resources in file order.
pub fn load(path: &Path, env: &dyn Fn(&str) -> Option<String>) -> Result<Vec<Resource>, LoadError> {
    let mut problems = Vec::new();
    let files = match files_of(path) {
        Ok(files) => files,
        Err(problem) => {
            return Err(LoadError {
                problems: vec![problem],
            })
        }
    };
    let validators = SpecValidators::get();
    let mut resources = Vec::new();
    for file in &files {
        let documents = match read_documents(file) {
            Ok(documents) => documents,
            Err(problem) => {
                problems.push(problem);
                continue;
            }
        };
        for (index, document) in documents.into_iter().enumerate() {
            for (item, value) in items_of(document, file, index + 1, &mut problems) {
                let source = Source {
                    file: file.clone(),
                    document: index + 1,
                    item,
                };
                if let Some(resource) = envelope(value, source, &mut problems) {
                    for (field, message) in validators.errors(resource.kind, &resource.spec) {
                        problems.push(problem_at(&resource, Some(field), message));
                    }
                    resources.push(resource);
                }
            }
        }
    }
    problems.extend(duplicates(&resources));
    for resource in &mut resources {
        let mut path = vec!["spec".to_string()];
        let mut missing = Vec::new();
        resolve_from_env(&mut resource.spec, &mut path, env, &mut missing);
        for (field, var) in missing {
            let message = format!("the environment variable {var} is not set");
            problems.push(problem_at(resource, Some(field), message));
        }
    }
    if problems.is_empty() {
        Ok(resources)
    } else {
        Err(LoadError { problems })
    }
}

/// `load` with the process's environment.
pub fn load_from_environment(path: &Path) -> Result<Vec<Resource>, LoadError> {
    load(path, &|name| std::env::var(name).ok())
}

fn problem_at(resource: &Resource, field: Option<String>, message: String) -> Problem {
    Problem {
        place: resource.source.to_string(),
        resource: Some(resource.label()),
        field,
        message,
    }
}

fn file_problem(file: &Path, message: String) -> Problem {
    Problem {
        place: file.display().to_string(),
        resource: None,
        field: None,
        message,
    }
}

fn is_resource_file(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml" | "json")
    )
}

/// The files `path` names: itself, or every resource file under it
/// (recursively), sorted by path.
fn files_of(path: &Path) -> Result<Vec<PathBuf>, Problem> {
    let meta =
        std::fs::metadata(path).map_err(|e| file_problem(path, format!("cannot read: {e}")))?;
    if !meta.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files = Vec::new();
    let mut pending = vec![path.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries =
            std::fs::read_dir(&dir).map_err(|e| file_problem(&dir, format!("cannot read: {e}")))?;
        for entry in entries {
            let entry = entry.map_err(|e| file_problem(&dir, format!("cannot read: {e}")))?;
            let entry_path = entry.path();
            if entry_path.is_dir() {
                pending.push(entry_path);
            } else if is_resource_file(&entry_path) {
                files.push(entry_path);
            }
        }
    }
    if files.is_empty() {
        return Err(file_problem(
            path,
            "holds no .yaml, .yml or .json file".into(),
        ));
    }
    files.sort();
    Ok(files)
}

/// A file's documents (empty YAML documents left out, so a trailing `---`
/// is harmless, but counted, so document numbers match what an editor
/// shows).
fn read_documents(file: &Path) -> Result<Vec<Value>, Problem> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| file_problem(file, format!("cannot read: {e}")))?;
    if file.extension().and_then(|e| e.to_str()) == Some("json") {
        let value: Value = serde_json::from_str(&text)
            .map_err(|e| file_problem(file, format!("not valid JSON: {e}")))?;
        return Ok(vec![value]);
    }
    let mut documents = Vec::new();
    for (index, document) in serde_norway::Deserializer::from_str(&text).enumerate() {
        let value = Value::deserialize(document).map_err(|e| {
            file_problem(file, format!("document {}: not valid YAML: {e}", index + 1))
        })?;
        documents.push(value);
    }
    Ok(documents)
}

/// The resources of one document, with their item numbers when it is a
/// list.
fn items_of(
    document: Value,
    file: &Path,
    number: usize,
    problems: &mut Vec<Problem>,
) -> Vec<(Option<usize>, Value)> {
    let listed = |items: Vec<Value>| {
        items
            .into_iter()
            .enumerate()
            .map(|(i, v)| (Some(i + 1), v))
            .collect()
    };
    match document {
        Value::Null => Vec::new(),
        Value::Array(items) => listed(items),
        Value::Object(mut map) if !map.contains_key("kind") && map.contains_key("resources") => {
            let others: Vec<&String> = map.keys().filter(|k| *k != "resources").collect();
            if !others.is_empty() {
                problems.push(Problem {
                    place: format!("{}: document {number}", file.display()),
                    resource: None,
                    field: Some(others[0].clone()),
                    message: "unknown field beside `resources`".into(),
                });
            }
            match map.remove("resources") {
                Some(Value::Array(items)) => listed(items),
                _ => {
                    problems.push(Problem {
                        place: format!("{}: document {number}", file.display()),
                        resource: None,
                        field: Some("resources".into()),
                        message: "must be a list of resources".into(),
                    });
                    Vec::new()
                }
            }
        }
        other => vec![(None, other)],
    }
}

/// `{kind, ref, spec}` read and checked: a problem for each thing wrong.
fn envelope(value: Value, source: Source, problems: &mut Vec<Problem>) -> Option<Resource> {
    let place = source.to_string();
    let Value::Object(map) = value else {
        problems.push(Problem {
            place,
            resource: None,
            field: None,
            message: "a resource must be an object with `kind`, `ref` and `spec`".into(),
        });
        return None;
    };
    let mut problem = |resource: Option<String>, field: &str, message: &str| {
        problems.push(Problem {
            place: place.clone(),
            resource,
            field: Some(field.into()),
            message: message.into(),
        })
    };
    let kind_name = map.get("kind").and_then(Value::as_str).unwrap_or_default();
    let reference = map.get("ref").and_then(Value::as_str).unwrap_or_default();
    let label = Some(format!(
        "{}/{}",
        if kind_name.is_empty() { "?" } else { kind_name },
        if reference.is_empty() { "?" } else { reference }
    ));
    let kind = Kind::parse(kind_name);
    let mut ok = true;
    if kind.is_none() {
        let names: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
        problem(
            label.clone(),
            "kind",
            &format!("must be one of {}", names.join(", ")),
        );
        ok = false;
    }
    if !is_valid_ref(reference) {
        problem(
            label.clone(),
            "ref",
            "must be 1 to 255 of a-z, 0-9, `.`, `_` and `-`, starting and ending with a letter or digit",
        );
        ok = false;
    }
    if !map.get("spec").is_some_and(Value::is_object) {
        problem(
            label.clone(),
            "spec",
            "must be an object (the kind's fields)",
        );
        ok = false;
    }
    for key in map.keys() {
        if !matches!(key.as_str(), "kind" | "ref" | "spec") {
            problem(
                label.clone(),
                key.as_str(),
                "unknown field (a resource has `kind`, `ref` and `spec`)",
            );
            ok = false;
        }
    }
    let kind = kind.filter(|_| ok)?;
    let spec = map
        .get("spec")
        .cloned()
        .unwrap_or(Value::Object(Map::new()));
    Some(Resource {
        kind,
        reference: reference.to_string(),
        spec,
        source,
    })
}

/// The same kind and ref twice: a problem naming both places.
fn duplicates(resources: &[Resource]) -> Vec<Problem> {
    let mut first: HashMap<(Kind, &str), &Resource> = HashMap::new();
    let mut problems = Vec::new();
    for resource in resources {
        match first.get(&(resource.kind, resource.reference.as_str())) {
            Some(earlier) => problems.push(Problem {
                place: resource.source.to_string(),
                resource: Some(resource.label()),
                field: Some("ref".into()),
                message: format!("defined twice: also at {}", earlier.source),
            }),
            None => {
                first.insert((resource.kind, resource.reference.as_str()), resource);
            }
        }
    }
    problems
}

/// Replaces every `{from_env: VAR}` with the variable's value; the ones
/// not set are collected as (field, variable).
fn resolve_from_env(
    value: &mut Value,
    path: &mut Vec<String>,
    env: &dyn Fn(&str) -> Option<String>,
    missing: &mut Vec<(String, String)>,
) {
    match value {
        Value::Object(map) => {
            let variable = match (map.len(), map.get("from_env")) {
                (1, Some(Value::String(variable))) => Some(variable.clone()),
                _ => None,
            };
            if let Some(variable) = variable {
                match env(&variable) {
                    Some(secret) => *value = Value::String(secret),
                    None => missing.push((field_path(path), variable)),
                }
                return;
            }
            for (key, inner) in map.iter_mut() {
                path.push(key.clone());
                resolve_from_env(inner, path, env, missing);
                path.pop();
            }
        }
        Value::Array(items) => {
            for (index, inner) in items.iter_mut().enumerate() {
                path.push(format!("[{index}]"));
                resolve_from_env(inner, path, env, missing);
                path.pop();
            }
        }
        _ => {}
    }
}

#[cfg(test)]
#[path = "resource_file_tests.rs"]
mod tests;
