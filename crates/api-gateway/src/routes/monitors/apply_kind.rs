//! Monitors in `POST /api/v1/apply` (`crate::apply`, `routes::apply`):
//! the organisation's managed monitors loaded at once, each desired monitor
//! planned by [`plan_one`] (a create body's validation, the same as
//! `PUT .../by-ref/{ref}`) and written by [`execute`]; creates without
//! alert rules (nearly all of a large import) go in with a few multi-row
//! statements instead, as a bulk create does.

use super::by_ref::{execute, plan_one, Outcome, Planned};
use super::handlers::{announce, no_such_contacts};
use super::types::CreateMonitor;
use super::writes::{Current, WriteSettings};
use crate::apply::changes::FieldChange;
use crate::apply::request::Action;
use crate::audit;
use crate::auth::AuthUser;
use crate::error::{ApiError, FieldError};
use crate::state::AppState;
use diesel_async::AsyncPgConnection;
use futures::StreamExt;
use std::collections::HashMap;
use uptime_contracts::MonitorChange;
use uptime_db::alerting::AlertRules;
use uptime_db::refs::RefKind;

/// Announcements awaiting their publish ack at once.
const ANNOUNCE_IN_FLIGHT: usize = 1024;

/// The deployment's settings for monitor writes of an apply (which checks
/// the quotas once, for its end state).
pub(crate) struct MonitorWrites(WriteSettings);

impl MonitorWrites {
    pub(crate) fn of(state: &AppState) -> Self {
        let mut settings = WriteSettings::of(state);
        settings.end_state_quota = true;
        Self(settings)
    }
}

/// The organisation's monitors that carry a ref, by ref, locked until the
/// transaction ends: three queries whatever their number.
pub(crate) struct ManagedMonitors(HashMap<String, Current>);

impl ManagedMonitors {
    pub(crate) async fn load(
        c: &mut AsyncPgConnection,
        org_id: i64,
        writes: &MonitorWrites,
    ) -> Result<Self, ApiError> {
        let refs: HashMap<i64, String> = uptime_db::refs::all(c, RefKind::Monitor, org_id)
            .await?
            .into_iter()
            .collect();
        let ids: Vec<i64> = refs.keys().copied().collect();
        let rows = uptime_db::refs::monitors_locked(c, org_id, &ids).await?;
        let mut contacts = uptime_db::monitors::contact_ids_of(c, &ids).await?;
        let mut managed = HashMap::with_capacity(rows.len());
        for row in rows {
            let Some(r#ref) = refs.get(&row.id).cloned() else {
                continue;
            };
            let contact_ids = contacts.remove(&row.id).unwrap_or_default();
            let (current, _) =
                Current::of(row, contact_ids, Some(r#ref.clone()), &writes.0.regions)?;
            managed.insert(r#ref, current);
        }
        Ok(Self(managed))
    }

    /// The id of the managed monitor `r#ref`.
    pub(crate) fn id_of(&self, r#ref: &str) -> Option<i64> {
        self.0.get(r#ref).map(|c| c.row.id)
    }

    /// `(ref, id)` of every managed monitor.
    pub(crate) fn ids(&self) -> impl Iterator<Item = (&str, i64)> {
        self.0.iter().map(|(r, c)| (r.as_str(), c.row.id))
    }
}

/// One desired monitor, planned.
pub(crate) struct MonitorPlan(Planned);

impl MonitorPlan {
    pub(crate) fn action(&self) -> Action {
        match &self.0 {
            Planned::Create { .. } => Action::Create,
            Planned::Update { .. } => Action::Update,
            Planned::Unchanged { .. } => Action::Unchanged,
        }
    }

    /// The stored id (updates and unchanged).
    pub(crate) fn id(&self) -> Option<i64> {
        match &self.0 {
            Planned::Create { .. } => None,
            Planned::Update { current, .. } | Planned::Unchanged { current } => {
                Some(current.row.id)
            }
        }
    }

    pub(crate) fn changes(&self) -> Option<Vec<FieldChange>> {
        match &self.0 {
            Planned::Update { changes, .. } => Some(changes.clone()),
            _ => None,
        }
    }

    /// A create that a multi-row insert can take: no alert rules (which
    /// name other monitors and are checked one monitor at a time).
    pub(crate) fn is_plain_create(&self) -> bool {
        matches!(&self.0, Planned::Create { rules, .. } if *rules == AlertRules::default())
    }
}

/// Plans the desired monitor `r#ref` from its resolved spec (a create
/// body; 400 naming its fields, unprefixed, when it is not one).
pub(crate) fn plan_monitor(
    org_id: i64,
    r#ref: &str,
    spec: serde_json::Value,
    managed: &ManagedMonitors,
    writes: &MonitorWrites,
) -> Result<MonitorPlan, ApiError> {
    let body: CreateMonitor =
        serde_json::from_value(spec).map_err(|e| ApiError::invalid_field("spec", e.to_string()))?;
    let current = managed.0.get(r#ref).cloned();
    plan_one(org_id, r#ref, current, body, &writes.0).map(MonitorPlan)
}

/// Carries out one plan; the monitor's id.
pub(crate) async fn execute_monitor(
    c: &mut AsyncPgConnection,
    user: &AuthUser,
    plan: MonitorPlan,
    writes: &MonitorWrites,
) -> Result<i64, ApiError> {
    Ok(match execute(c, user, plan.0, &writes.0).await? {
        Outcome::Created(w) | Outcome::Replaced(w) | Outcome::Unchanged(w) => w.row.id,
    })
}

/// Inserts plain creates ([`MonitorPlan::is_plain_create`]) with a few
/// multi-row statements: their contacts checked in one query, the rows and
/// links in chunks, their refs in one statement, one audit entry naming
/// them all (as a bulk create). Their ids, in order; a plan that is not a
/// plain create is a bug (500).
pub(crate) async fn insert_plain(
    c: &mut AsyncPgConnection,
    user: &AuthUser,
    plans: Vec<(String, MonitorPlan)>,
) -> Result<Vec<i64>, ApiError> {
    if plans.is_empty() {
        return Ok(Vec::new());
    }
    let mut news = Vec::with_capacity(plans.len());
    let mut contact_ids = Vec::with_capacity(plans.len());
    let mut labels = Vec::with_capacity(plans.len());
    let mut refs = Vec::with_capacity(plans.len());
    for (r#ref, plan) in plans {
        let Planned::Create { creation, .. } = plan.0 else {
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

/// Deletes the managed monitor `r#ref` (one audit entry with what it was).
pub(crate) async fn delete_monitor(
    c: &mut AsyncPgConnection,
    user: &AuthUser,
    r#ref: &str,
    managed: &ManagedMonitors,
) -> Result<(), ApiError> {
    let Some(current) = managed.0.get(r#ref) else {
        return Err(ApiError::Internal(format!(
            "monitor {:?} to delete not loaded",
            r#ref
        )));
    };
    let id = current.row.id;
    if !uptime_db::monitors::delete(c, user.org_id, id).await? {
        return Err(ApiError::Internal(format!(
            "monitor {id} to delete is gone"
        )));
    }
    audit::record(
        c,
        user,
        audit::action::DELETE,
        audit::kind::MONITOR,
        Some(id),
        audit::changes(Some(&current.audited), None),
    )
    .await
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
