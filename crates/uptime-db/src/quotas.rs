//! Per-organisation quotas: the operator's overrides (`organisation_quotas`)
//! and the counts they are compared with. A check that must hold against
//! concurrent creates runs [`lock_for_quota`] (or [`lock_quotas`]) first, in
//! the transaction that inserts.
//!
//! Besides counts, an organisation has a budget of checks per minute: the
//! sum of [`check_load_millis`] over its active monitors, kept in
//! `organisations.check_load_millis` by triggers (migrations 000014, 000017).

use crate::schema::{alert_contacts, api_keys, organisation_quotas, organisations};
use crate::DbResult;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

/// One organisation's overrides; `None` = the configured default. Also read
/// by name, as the `q.*` columns of the statements that join them onto the
/// organisation's row ([`lock_quotas`], [`usage`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Queryable, Selectable, QueryableByName)]
#[diesel(table_name = organisation_quotas)]
pub struct QuotaOverrides {
    pub monitors: Option<i64>,
    pub alert_contacts: Option<i64>,
    pub api_keys: Option<i64>,
    /// Checks per minute, summed over the organisation's active monitors.
    pub checks_per_minute: Option<i64>,
}

/// What one monitor costs to run, in thousandths of a check per minute:
/// `regions` checks every `interval_secs`, rounded up to a whole thousandth
/// (so sums stay exact integers and never undercount). Heartbeats cost
/// nothing: they are pinged, never checked. Migration 000014 computes the
/// same for the monitors it backfills.
pub fn check_load_millis(
    kind: uptime_contracts::MonitorKind,
    interval_secs: i32,
    regions: usize,
) -> i32 {
    if kind == uptime_contracts::MonitorKind::Heartbeat {
        return 0;
    }
    let per_minute = i64::try_from(regions)
        .unwrap_or(i64::MAX)
        .saturating_mul(60_000);
    let interval = i64::from(interval_secs.max(1));
    i32::try_from((per_minute + interval - 1) / interval).unwrap_or(i32::MAX)
}

/// What an organisation owns, per quota.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owned {
    Monitors,
    AlertContacts,
    /// Unrevoked keys only: revoking one frees its place.
    ApiKeys,
}

/// Locks the organisation's row until the transaction ends, so concurrent
/// creates of one organisation are counted one after the other. `false` if
/// there is no such organisation.
pub async fn lock_organisation(conn: &mut AsyncPgConnection, org_id: i64) -> DbResult<bool> {
    let found: Option<i64> = organisations::table
        .find(org_id)
        .select(organisations::id)
        .for_update()
        .first(conn)
        .await
        .optional()?;
    Ok(found.is_some())
}

#[derive(QueryableByName)]
struct LockedOrganisation {
    #[diesel(sql_type = diesel::sql_types::Int8)]
    monitor_count: i64,
    #[diesel(sql_type = diesel::sql_types::Int8)]
    check_load_millis: i64,
    #[diesel(sql_type = diesel::sql_types::Int8)]
    monitor_load_millis: i64,
    #[diesel(embed)]
    overrides: QuotaOverrides,
}

/// An organisation's quota state, read with its row locked until the transaction
/// ends.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Locked {
    pub overrides: QuotaOverrides,
    /// `organisations.monitor_count`.
    pub monitor_count: i64,
    /// `organisations.check_load_millis`: the load of the organisation's active monitors.
    pub check_load_millis: i64,
    /// What the monitor asked about (see [`lock_quotas`]) adds to that load
    /// now: its `check_load_millis` if active, else 0 (also when there is
    /// no such monitor of the organisation's).
    pub monitor_load_millis: i64,
}

/// Locks the organisation's row (as [`lock_organisation`]) and reads, in one statement, the
/// overrides, the kept monitor count and load, and what `monitor` (one of
/// the organisation's, when given) contributes to that load. An organisation
/// that does not exist has no overrides and owns nothing (an insert that follows fails on
/// its foreign key).
pub async fn lock_quotas(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    monitor: Option<i64>,
) -> DbResult<Locked> {
    let locked: Option<LockedOrganisation> = diesel::sql_query(
        "SELECT u.monitor_count, u.check_load_millis, \
                coalesce((SELECT CASE WHEN m.active THEN m.check_load_millis ELSE 0 END::int8 \
                          FROM monitors m WHERE m.id = $2 AND m.org_id = u.id), 0) \
                    AS monitor_load_millis, \
                q.monitors, q.alert_contacts, q.api_keys, q.checks_per_minute \
         FROM organisations u LEFT JOIN organisation_quotas q ON q.org_id = u.id \
         WHERE u.id = $1 FOR UPDATE OF u",
    )
    .bind::<diesel::sql_types::Int8, _>(org_id)
    .bind::<diesel::sql_types::Nullable<diesel::sql_types::Int8>, _>(monitor)
    .get_result(conn)
    .await
    .optional()?;
    let Some(locked) = locked else {
        return Ok(Locked::default());
    };
    Ok(Locked {
        overrides: locked.overrides,
        monitor_count: locked.monitor_count,
        check_load_millis: locked.check_load_millis,
        monitor_load_millis: locked.monitor_load_millis,
    })
}

/// What a quota decision needs: the organisation's overrides and how many of
/// `what` it owns, read with its row locked (as [`lock_organisation`]) until the
/// transaction ends. The row, its overrides and the kept monitor count come
/// in one statement; other counts take a second.
pub async fn lock_for_quota(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    what: Owned,
) -> DbResult<(QuotaOverrides, i64)> {
    let locked = lock_quotas(conn, org_id, None).await?;
    let owned = match what {
        Owned::Monitors => locked.monitor_count,
        other => count(conn, org_id, other).await?,
    };
    Ok((locked.overrides, owned))
}

#[derive(QueryableByName)]
struct UsageRow {
    #[diesel(sql_type = diesel::sql_types::Int8)]
    monitor_count: i64,
    #[diesel(sql_type = diesel::sql_types::Int8)]
    check_load_millis: i64,
    #[diesel(sql_type = diesel::sql_types::Int8)]
    alert_contacts_owned: i64,
    #[diesel(sql_type = diesel::sql_types::Int8)]
    api_keys_owned: i64,
    #[diesel(embed)]
    overrides: QuotaOverrides,
}

/// Everything an organisation's quotas are compared with, and its overrides.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Usage {
    pub overrides: QuotaOverrides,
    pub monitors: i64,
    pub check_load_millis: i64,
    pub alert_contacts: i64,
    /// Unrevoked keys.
    pub api_keys: i64,
}

/// The organisation's [`Usage`] in one statement, without locking: the kept monitor
/// count and load, and the contacts and keys counted (an organisation has at
/// most a few hundred of each). `None` if there is no such organisation.
pub async fn usage(conn: &mut AsyncPgConnection, org_id: i64) -> DbResult<Option<Usage>> {
    let row: Option<UsageRow> = diesel::sql_query(
        "SELECT u.monitor_count, u.check_load_millis, \
                (SELECT count(*) FROM alert_contacts c WHERE c.org_id = u.id) \
                    AS alert_contacts_owned, \
                (SELECT count(*) FROM api_keys k \
                 WHERE k.org_id = u.id AND k.revoked_at IS NULL) AS api_keys_owned, \
                q.monitors, q.alert_contacts, q.api_keys, q.checks_per_minute \
         FROM organisations u LEFT JOIN organisation_quotas q ON q.org_id = u.id \
         WHERE u.id = $1",
    )
    .bind::<diesel::sql_types::Int8, _>(org_id)
    .get_result(conn)
    .await
    .optional()?;
    Ok(row.map(|row| Usage {
        overrides: row.overrides,
        monitors: row.monitor_count,
        check_load_millis: row.check_load_millis,
        alert_contacts: row.alert_contacts_owned,
        api_keys: row.api_keys_owned,
    }))
}

pub async fn count(conn: &mut AsyncPgConnection, org_id: i64, what: Owned) -> DbResult<i64> {
    Ok(match what {
        // Kept by triggers on monitors (migration 000011): one row read
        // instead of a scan of every monitor the organisation has.
        Owned::Monitors => organisations::table
            .find(org_id)
            .select(organisations::monitor_count)
            .first::<i64>(conn)
            .await
            .optional()?
            .unwrap_or(0),
        Owned::AlertContacts => {
            alert_contacts::table
                .filter(alert_contacts::org_id.eq(org_id))
                .count()
                .get_result(conn)
                .await?
        }
        Owned::ApiKeys => {
            api_keys::table
                .filter(api_keys::org_id.eq(org_id))
                .filter(api_keys::revoked_at.is_null())
                .count()
                .get_result(conn)
                .await?
        }
    })
}

/// Sets the overrides given (`Some`), keeps the others; returns them all.
pub async fn set(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    changes: &QuotaOverrides,
) -> DbResult<QuotaOverrides> {
    use diesel::upsert::excluded;
    Ok(diesel::insert_into(organisation_quotas::table)
        .values((
            organisation_quotas::org_id.eq(org_id),
            organisation_quotas::monitors.eq(changes.monitors),
            organisation_quotas::alert_contacts.eq(changes.alert_contacts),
            organisation_quotas::api_keys.eq(changes.api_keys),
            organisation_quotas::checks_per_minute.eq(changes.checks_per_minute),
        ))
        .on_conflict(organisation_quotas::org_id)
        .do_update()
        .set((
            organisation_quotas::monitors.eq(diesel::dsl::sql::<
                diesel::sql_types::Nullable<diesel::sql_types::Int8>,
            >(
                "COALESCE(excluded.monitors, organisation_quotas.monitors)",
            )),
            organisation_quotas::alert_contacts.eq(diesel::dsl::sql::<
                diesel::sql_types::Nullable<diesel::sql_types::Int8>,
            >(
                "COALESCE(excluded.alert_contacts, organisation_quotas.alert_contacts)",
            )),
            organisation_quotas::api_keys.eq(diesel::dsl::sql::<
                diesel::sql_types::Nullable<diesel::sql_types::Int8>,
            >(
                "COALESCE(excluded.api_keys, organisation_quotas.api_keys)",
            )),
            organisation_quotas::checks_per_minute.eq(diesel::dsl::sql::<
                diesel::sql_types::Nullable<diesel::sql_types::Int8>,
            >(
                "COALESCE(excluded.checks_per_minute, organisation_quotas.checks_per_minute)",
            )),
            organisation_quotas::updated_at.eq(excluded(organisation_quotas::updated_at)),
        ))
        .returning(QuotaOverrides::as_returning())
        .get_result(conn)
        .await?)
}
