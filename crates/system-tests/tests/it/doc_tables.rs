//! docs/architecture.md's table of tables (`| table | written by | columns
//! | notes |`) held to the schema the migrations make: a real database
//! migrated by `uptime-testkit`, read from `information_schema.columns`.
//! Every table of the schema has one row, naming it alone; its columns
//! cell names (backticked) every column it has and nothing else. A new
//! migration that adds a table or a column fails here until the page says
//! what it holds.

use super::doc_markdown::{backticked, read, tables_headed};
use diesel::sql_types::Text;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use std::collections::{BTreeMap, BTreeSet};
use uptime_testkit::TestDb;

const PAGE: &str = "docs/architecture.md";
const HEADER: [&str; 3] = ["table", "written by", "columns"];

/// Table → its columns.
type Schema = BTreeMap<String, BTreeSet<String>>;

#[derive(diesel::QueryableByName)]
struct Column {
    #[diesel(sql_type = Text)]
    table_name: String,
    #[diesel(sql_type = Text)]
    column_name: String,
}

/// The tables of the migrated schema with their columns: partitions
/// (`check_results_p20261122`, `check_results_default`) are their parent's,
/// and diesel's own bookkeeping table is not ours.
async fn migrated_schema() -> Schema {
    let db = TestDb::create().await;
    let mut conn = AsyncPgConnection::establish(&db.url).await.unwrap();
    let columns: Vec<Column> = diesel::sql_query(
        "SELECT col.table_name::text AS table_name, col.column_name::text AS column_name \
         FROM information_schema.columns col \
         JOIN pg_class c \
           ON c.oid = (quote_ident(col.table_schema) || '.' || quote_ident(col.table_name))::regclass \
         WHERE col.table_schema = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition \
           AND col.table_name NOT LIKE '\\_\\_%' \
         ORDER BY col.table_name, col.ordinal_position",
    )
    .load(&mut conn)
    .await
    .unwrap();
    let mut schema = Schema::new();
    for c in columns {
        schema
            .entry(c.table_name)
            .or_default()
            .insert(c.column_name);
    }
    schema
}

/// Where the page's table of tables (`text`) disagrees with `schema`.
fn problems(text: &str, schema: &Schema) -> Vec<String> {
    let tables = tables_headed(text, &HEADER);
    let [table] = &tables[..] else {
        return vec![format!(
            "{PAGE}: {} tables headed {HEADER:?}, one wanted",
            tables.len()
        )];
    };
    let mut problems = Vec::new();
    let mut described: BTreeMap<&str, usize> = BTreeMap::new();
    for row in &table.rows {
        let at = format!("{PAGE}:{}", row.line);
        let names = backticked(&row.cells[0]);
        let [name] = names[..] else {
            problems.push(format!("{at}: a row names {names:?}: one table per row"));
            continue;
        };
        if let Some(first) = described.insert(name, row.line) {
            problems.push(format!(
                "{at}: `{name}` is described twice (first on line {first})"
            ));
        }
        let Some(columns) = schema.get(name) else {
            problems.push(format!(
                "{at}: `{name}`: no such table in the migrated schema"
            ));
            continue;
        };
        let said: BTreeSet<String> = row
            .cells
            .get(2)
            .map(|c| backticked(c).into_iter().map(str::to_string).collect())
            .unwrap_or_default();
        let missing: Vec<&String> = columns.difference(&said).collect();
        let unknown: Vec<&String> = said.difference(columns).collect();
        if !missing.is_empty() {
            problems.push(format!(
                "{at}: `{name}` has columns its row does not name: {missing:?}"
            ));
        }
        if !unknown.is_empty() {
            problems.push(format!(
                "{at}: `{name}` has no columns {unknown:?} (only column names are backticked in \
                 the columns cell)"
            ));
        }
    }
    for name in schema
        .keys()
        .filter(|t| !described.contains_key(t.as_str()))
    {
        problems.push(format!(
            "{PAGE}:{}: no row for the table `{name}` (columns {:?})",
            table.line, schema[name]
        ));
    }
    problems
}

#[tokio::test]
async fn the_table_of_tables_is_the_migrated_schema() {
    let schema = migrated_schema().await;
    assert!(
        schema
            .get("monitors")
            .is_some_and(|c| c.contains("definition_version")),
        "the schema read finds real columns: {schema:?}"
    );
    assert!(
        !schema.keys().any(|t| t.starts_with("check_results_")),
        "partitions are their parent's"
    );
    let found = problems(&read(PAGE), &schema);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_table_rule_sees_twice_described_missing_and_unknown() {
    // Positive control, in the page's old shape: a table in two rows, a
    // row of two tables, and a column the schema does not have.
    let schema: Schema = [
        ("api_keys", &["id", "scope", "label_selector"][..]),
        ("incidents", &["id", "alerts"][..]),
        ("users", &["id"][..]),
        ("memberships", &["org_id"][..]),
    ]
    .into_iter()
    .map(|(t, cs)| (t.to_string(), cs.iter().map(|c| c.to_string()).collect()))
    .collect();
    let old = "| table | written by | columns | notes |\n| --- | --- | --- | --- |\n\
               | `api_keys` | api-gateway | `id`, `scope`, `label_selector` | |\n\
               | `api_keys` | api-gateway | `id`, `scope` | |\n\
               | `users`, `memberships` | api-gateway | `id` | |\n\
               | `incidents` | recorder | `id`, `alerts`, `alert_held` | |\n";
    let found = problems(old, &schema).join("\n");
    assert!(found.contains("`api_keys` is described twice"), "{found}");
    assert!(
        found.contains("does not name: [\"label_selector\"]"),
        "{found}"
    );
    assert!(found.contains("one table per row"), "{found}");
    assert!(
        found.contains("`incidents` has no columns [\"alert_held\"]"),
        "{found}"
    );
    assert!(
        found.contains("no row for the table `memberships`"),
        "{found}"
    );
}
