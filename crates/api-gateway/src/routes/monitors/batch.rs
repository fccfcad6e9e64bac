//! Many new monitors written with a few multi-row statements, and many
//! announced at once: a bulk create ([`super::bulk`]) and the plain creates
//! of an apply (those without alert rules, nearly all of a large import),
//! which go in as a bulk create does instead of one by one.

use super::announce::announce;
use super::contact_ids::no_such_contacts;
use super::draft::Creation;
use super::resource::{CheckedMonitor, Monitors};
use crate::audit;
use crate::auth::AuthUser;
use crate::error::{ApiError, FieldError};
use crate::resource::Plan;
use crate::state::AppState;
use diesel_async::AsyncPgConnection;
use futures::StreamExt;
use uptime_contracts::MonitorChange;
use uptime_db::models::{Monitor, NewMonitor};
use uptime_db::refs::RefKind;

/// Announcements awaiting their publish ack at once.
const ANNOUNCE_IN_FLIGHT: usize = 1024;

/// Validated creates to insert together.
#[derive(Default)]
pub(super) struct Batch {
    news: Vec<NewMonitor>,
    /// Each one's contacts, ascending, without repeats.
    contact_ids: Vec<Vec<i64>>,
    /// Each one's labels, or none at all: the column's default for every one.
    labels: Vec<serde_json::Value>,
    refs: Vec<Option<String>>,
}

impl Batch {
    /// Adds `creation`, its labels written when `labelled` (the same for
    /// every one of the batch).
    pub(super) fn push(&mut self, mut creation: Creation, labelled: bool) {
        creation.contact_ids.sort_unstable();
        creation.contact_ids.dedup();
        self.news.push(creation.new);
        self.contact_ids.push(creation.contact_ids);
        if labelled {
            self.labels.push(creation.labels.to_json());
        }
        self.refs.push(creation.r#ref);
    }

    pub(super) fn news(&self) -> &[NewMonitor] {
        &self.news
    }
}

/// Inserts `batch` in the caller's transaction: its contacts checked in
/// one query (locked, as a single create locks its own; `contacts_field(i)`
/// names the `i`-th one's in a refusal), the rows and links in chunks,
/// their refs in one statement (a ref already taken, by another monitor
/// or another of the batch, is a 409), one audit entry naming them all
/// (an entry per monitor would double a bulk import's writes). The rows
/// and their contacts, in order.
pub(super) async fn insert_batch(
    c: &mut AsyncPgConnection,
    user: &AuthUser,
    batch: Batch,
    contacts_field: impl Fn(usize) -> String,
) -> Result<(Vec<Monitor>, Vec<Vec<i64>>), ApiError> {
    let Batch {
        news,
        contact_ids,
        labels,
        refs,
    } = batch;
    let mut wanted: Vec<i64> = contact_ids.iter().flatten().copied().collect();
    wanted.sort_unstable();
    wanted.dedup();
    let owned = uptime_db::contacts::owned_ids_locked(c, user.org_id, &wanted).await?;
    let unknown: Vec<FieldError> = contact_ids
        .iter()
        .enumerate()
        .filter_map(|(i, ids)| {
            no_such_contacts(ids, &owned).map(|message| FieldError::new(contacts_field(i), message))
        })
        .collect();
    if !unknown.is_empty() {
        return Err(ApiError::InvalidBody(unknown));
    }
    let count = news.len();
    let rows = uptime_db::monitors::create_many_labelled(c, news, &contact_ids, &labels).await?;
    if rows.len() != count {
        // Rolled back: all or nothing.
        return Err(ApiError::Internal(format!(
            "{} of {count} monitors came back from the insert",
            rows.len()
        )));
    }
    let (ref_ids, refs): (Vec<i64>, Vec<String>) = rows
        .iter()
        .zip(refs)
        .filter_map(|(row, r)| Some((row.id, r?)))
        .unzip();
    uptime_db::refs::set_many(c, RefKind::Monitor, user.org_id, &ref_ids, &refs)
        .await
        .map_err(|e| crate::refs::from_db(RefKind::Monitor, user, e))?;
    let ids: Vec<i64> = rows.iter().map(|m| m.id).collect();
    audit::record(
        c,
        user,
        audit::action::BULK_CREATE,
        audit::kind::MONITOR,
        None,
        serde_json::json!({"monitor_ids": {"before": null, "after": ids}}),
    )
    .await?;
    Ok((rows, contact_ids))
}

/// Inserts an apply's plain creates (`super::resource::is_plain_create`),
/// each with its ref, as [`insert_batch`] does; a refusal of contacts names
/// the monitor's ref. Their ids, in order; a plan that is not a plain
/// create is a bug (500).
pub(crate) async fn insert_plain(
    c: &mut AsyncPgConnection,
    user: &AuthUser,
    plans: Vec<(String, Plan<Monitors>)>,
) -> Result<Vec<i64>, ApiError> {
    if plans.is_empty() {
        return Ok(Vec::new());
    }
    let mut batch = Batch::default();
    let mut refs = Vec::with_capacity(plans.len());
    for (r#ref, plan) in plans {
        let Plan::Create(CheckedMonitor::Create { mut creation, .. }) = plan else {
            return Err(ApiError::Internal(
                "a planned update in a batch insert".into(),
            ));
        };
        creation.r#ref = Some(r#ref.clone());
        batch.push(*creation, true);
        refs.push(r#ref);
    }
    let (rows, _) = insert_batch(c, user, batch, |i| {
        format!("{}: alert_contact_ids", refs[i])
    })
    .await?;
    Ok(rows.iter().map(|m| m.id).collect())
}

/// Tells the scheduler (after commit) of written and deleted monitors,
/// many acks in flight at once; a lost announcement is only logged (the
/// scheduler resyncs from the database).
pub(crate) async fn announce_all(state: &AppState, written: &[i64], deleted: &[i64]) {
    let changes = written
        .iter()
        .map(|&id| (id, MonitorChange::Upserted))
        .chain(deleted.iter().map(|&id| (id, MonitorChange::Deleted)));
    futures::stream::iter(changes)
        .for_each_concurrent(ANNOUNCE_IN_FLIGHT, |(id, change)| {
            announce(state, id, change)
        })
        .await;
}
