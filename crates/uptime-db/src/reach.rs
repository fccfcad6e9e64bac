//! Which monitors a caller reaches: the one rule every query of a monitor's
//! things applies (the monitor itself, its results and rounds, incidents,
//! deliveries, metrics, audit entries, the monitors a window, a status
//! page or a dependency names). An API key reaches the monitors of its
//! organisation; a key with a label selector only those whose labels hold
//! every pair of it. Whatever is out of reach is answered as another
//! organisation's is: `404`, or absent from lists.
//!
//! The rule has two spellings, both here: [`Reach::monitors`] for diesel's
//! query builder, and [`Reach::sql_test`] (with [`Reach::bind`]) for the
//! statements written as SQL text. `tests/it/reach.rs` checks they agree.

use crate::schema::monitors;
use crate::DbResult;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Bool, Jsonb, Nullable};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use std::collections::HashSet;

/// Which of an organisation's monitors a caller reaches: all of them, or,
/// for an API key with a label selector, only those whose labels hold every
/// pair of it.
#[derive(Debug, Clone, Copy)]
pub struct Reach<'a> {
    pub org_id: i64,
    /// A JSON object of key -> value (`uptime_labels::Selector`); `None`
    /// (or `{}`): every monitor of the organisation.
    pub selector: Option<&'a serde_json::Value>,
}

pub(crate) type BoxedMonitors<'a> = monitors::BoxedQuery<'a, Pg>;

/// The stored form of no labels.
pub(crate) fn no_labels() -> serde_json::Value {
    serde_json::Value::Object(Default::default())
}

impl<'a> Reach<'a> {
    /// Every monitor of the organisation.
    pub fn org(org_id: i64) -> Self {
        Self {
            org_id,
            selector: None,
        }
    }

    /// The selector, when it narrows anything (`{}` holds for every monitor).
    pub fn narrowing(&self) -> Option<&'a serde_json::Value> {
        self.selector
            .filter(|s| s.as_object().is_some_and(|o| !o.is_empty()))
    }

    /// Whether some monitors of the organisation are out of reach.
    pub fn is_limited(&self) -> bool {
        self.narrowing().is_some()
    }

    /// `monitors` the caller reaches. A selector also says `labels <> '{}'`,
    /// the predicate of the partial GIN index (migration 000021), so the
    /// planner may use it.
    pub fn monitors(self) -> BoxedMonitors<'a> {
        let mut query = monitors::table
            .filter(monitors::org_id.eq(self.org_id))
            .into_boxed();
        if let Some(selector) = self.narrowing() {
            query = query
                .filter(monitors::labels.contains(selector))
                .filter(monitors::labels.ne(no_labels()));
        }
        query
    }

    /// The ids of the monitors reached, as a subquery (`eq_any`).
    pub fn monitor_ids(self) -> monitors::BoxedQuery<'a, Pg, BigInt> {
        self.monitors().select(monitors::id)
    }

    /// Which of `ids` the caller reaches.
    pub async fn reached_among(
        self,
        conn: &mut AsyncPgConnection,
        ids: &[i64],
    ) -> DbResult<HashSet<i64>> {
        if ids.is_empty() {
            return Ok(HashSet::new());
        }
        Ok(self
            .monitor_ids()
            .filter(monitors::id.eq_any(ids.to_vec()))
            .load::<i64>(conn)
            .await?
            .into_iter()
            .collect())
    }

    /// Whether the caller reaches monitor `id`.
    pub async fn reaches(self, conn: &mut AsyncPgConnection, id: i64) -> DbResult<bool> {
        Ok(self.reached_among(conn, &[id]).await?.contains(&id))
    }

    /// The rule as SQL text, for a statement written by hand
    /// (`diesel::sql_query`): holds for the monitor row aliased `m` when
    /// the caller reaches it, with the organisation bound at the
    /// placeholder `org` and [`Reach::bind`] at `selector` (`$1`, `$2`...).
    pub fn sql_test(m: &str, org: &str, selector: &str) -> String {
        format!(
            "({m}.org_id = {org} AND ({selector}::jsonb IS NULL OR \
             ({m}.labels @> {selector}::jsonb AND {m}.labels <> '{{}}'::jsonb)))"
        )
    }

    /// The selector as [`Reach::sql_test`] binds it: `None` when nothing
    /// is narrowed.
    pub fn bind(&self) -> Option<&'a serde_json::Value> {
        self.narrowing()
    }

    /// A boolean SQL expression for a query builder's `filter`: `before`,
    /// then a subquery of the ids of the monitors reached, then `after`
    /// (`"x NOT IN ("`, `")"`).
    pub fn around_reached_ids<QS: 'a>(
        self,
        before: &str,
        after: &str,
    ) -> Box<dyn BoxableExpression<QS, Pg, SqlType = Bool> + 'a> {
        Box::new(
            diesel::dsl::sql::<Bool>(&format!(
                "{before}SELECT m.id FROM monitors m WHERE m.org_id = "
            ))
            .bind::<BigInt, _>(self.org_id)
            .sql(" AND (")
            .bind::<Nullable<Jsonb>, _>(self.bind().cloned())
            .sql("::jsonb IS NULL OR (m.labels @> ")
            .bind::<Nullable<Jsonb>, _>(self.bind().cloned())
            .sql(&format!("::jsonb AND m.labels <> '{{}}'::jsonb)){after}")),
        )
    }
}
