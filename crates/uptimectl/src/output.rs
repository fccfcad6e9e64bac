//! How results are shown: a table of chosen columns for people, or the
//! API's JSON or YAML for scripts.

use comfy_table::{presets::UTF8_BORDERS_ONLY, Table};
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Json,
    Yaml,
}

/// A column: its header and where its value is in an item (a JSON pointer).
pub type Column = (&'static str, &'static str);

/// `items` in `format`; `columns` are the table's.
pub fn render_list(items: &[Value], columns: &[Column], format: Format) -> String {
    match format {
        Format::Json => pretty_json(&Value::Array(items.to_vec())),
        Format::Yaml => yaml(&Value::Array(items.to_vec())),
        Format::Table => {
            let mut table = Table::new();
            table.load_preset(UTF8_BORDERS_ONLY);
            table.set_header(columns.iter().map(|(header, _)| *header));
            for item in items {
                table.add_row(
                    columns
                        .iter()
                        .map(|(_, pointer)| cell(item.pointer(pointer))),
                );
            }
            table.to_string()
        }
    }
}

/// One item: a table of its fields (nested ones as JSON), or JSON or YAML.
pub fn render_one(item: &Value, format: Format) -> String {
    match format {
        Format::Json => pretty_json(item),
        Format::Yaml => yaml(item),
        Format::Table => {
            let mut table = Table::new();
            table.load_preset(UTF8_BORDERS_ONLY);
            if let Some(fields) = item.as_object() {
                for (name, value) in fields {
                    table.add_row([name.clone(), cell(Some(value))]);
                }
            }
            table.to_string()
        }
    }
}

fn cell(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => "-".into(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Object(map)) if map.values().all(Value::is_string) => map
            .iter()
            .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
            .collect::<Vec<_>>()
            .join(","),
        Some(other) => other.to_string(),
    }
}

fn pretty_json(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

fn yaml(value: &Value) -> String {
    serde_norway::to_string(value).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_table_shows_the_columns_labels_as_pairs_and_absent_values_as_dashes() {
        let items = [json!({"id": 1, "name": "api", "labels": {"env": "prod"}})];
        let out = render_list(
            &items,
            &[
                ("ID", "/id"),
                ("NAME", "/name"),
                ("LABELS", "/labels"),
                ("STATUS", "/status"),
            ],
            Format::Table,
        );
        for expected in ["ID", "NAME", "api", "env=prod", "-"] {
            assert!(out.contains(expected), "{expected} in\n{out}");
        }
    }

    #[test]
    fn json_and_yaml_carry_the_items_as_the_api_gave_them() {
        let items = [json!({"id": 1, "name": "api"})];
        let json: Value = serde_json::from_str(&render_list(&items, &[], Format::Json)).unwrap();
        assert_eq!(json, json!([{"id": 1, "name": "api"}]));
        let yaml: Value = serde_norway::from_str(&render_list(&items, &[], Format::Yaml)).unwrap();
        assert_eq!(yaml, json);
    }
}
