//! Monitors in `POST /api/v1/apply` beyond the generic lifecycle
//! (`super::resource`): creates without alert rules (nearly all of a large
//! import) go in with a few multi-row statements, as a bulk create does,
//! and the scheduler is told of every write at once after commit.

use super::handlers::{announce, no_such_contacts};
use super::resource::{CheckedMonitor, Monitors};
use crate::audit;
use crate::auth::AuthUser;
use crate::error::{ApiError, FieldError};
use crate::resource::Plan;
use crate::state::AppState;
use diesel_async::AsyncPgConnection;
use futures::StreamExt;
use uptime_contracts::MonitorChange;
use uptime_db::refs::RefKind;

/// Announcements awaiting their publish ack at once.
const ANNOUNCE_IN_FLIGHT: usize = 1024;

/// Inserts plain creates (`super::resource::is_plain_create`) with a few
/// multi-row statements: their contacts checked in one query, the rows and
/// links in chunks, their refs in one statement, one audit entry naming
/// them all (as a bulk create). Their ids, in order; a plan that is not a
/// plain create is a bug (500).
pub(crate) async fn insert_plain(
    c: &mut AsyncPgConnection,
    user: &AuthUser,
    plans: Vec<(String, Plan<Monitors>)>,
) -> Result<Vec<i64>, ApiError> {
    if plans.is_empty() {
        return Ok(Vec::new());
    }
    let mut news = Vec::with_capacity(plans.len());
    let mut contact_ids = Vec::with_capacity(plans.len());
    let mut labels = Vec::with_capacity(plans.len());
    let mut refs = Vec::with_capacity(plans.len());
    for (r#ref, plan) in plans {
        let Plan::Create(CheckedMonitor::Create { creation, .. }) = plan else {
            return Err(ApiError::Internal(
                "a planned update in a batch insert".into(),
            ));
        };
        let mut creation = *creation;
        creation.contact_ids.sort_unstable();
        creation.contact_ids.dedup();
        news.push(creation.new);
        labels.push(creation.labels.to_json());
        contact_ids.push(creation.contact_ids);
        refs.push(r#ref);
    }
    let mut wanted: Vec<i64> = contact_ids.iter().flatten().copied().collect();
    wanted.sort_unstable();
    wanted.dedup();
    let owned = uptime_db::contacts::owned_ids_locked(c, user.org_id, &wanted).await?;
    let unknown: Vec<FieldError> = contact_ids
        .iter()
        .zip(&refs)
        .filter_map(|(ids, r#ref)| {
            no_such_contacts(ids, &owned)
                .map(|m| FieldError::new(format!("{}: alert_contact_ids", r#ref), m))
        })
        .collect();
    if !unknown.is_empty() {
        return Err(ApiError::InvalidBody(unknown));
    }
    let count = news.len();
    let rows = uptime_db::monitors::create_many_labelled(c, news, &contact_ids, &labels).await?;
    if rows.len() != count {
        return Err(ApiError::Internal(format!(
            "{} of {count} monitors came back from the insert",
            rows.len()
        )));
    }
    let ids: Vec<i64> = rows.iter().map(|m| m.id).collect();
    uptime_db::refs::set_many(c, RefKind::Monitor, user.org_id, &ids, &refs)
        .await
        .map_err(|e| crate::refs::from_db(RefKind::Monitor, user, e))?;
    audit::record(
        c,
        user,
        audit::action::BULK_CREATE,
        audit::kind::MONITOR,
        None,
        serde_json::json!({"monitor_ids": {"before": null, "after": ids}}),
    )
    .await?;
    Ok(ids)
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
