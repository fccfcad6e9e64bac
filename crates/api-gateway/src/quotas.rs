//! Per-organisation quotas: configured defaults (`[quotas]`), raised or
//! lowered for one organisation by `api-gateway set-quota` (stored in
//! `organisation_quotas`; per user before organisations, migration 000017).
//!
//! Besides counts (monitors, contacts, keys), a budget of checks per minute:
//! the sum over the organisation's active monitors of regions × 60 /
//! interval (heartbeats cost nothing: they are pinged, not checked). Each
//! monitor's cost is written with it (`check_load_millis`, in thousandths so
//! the sums are exact) and the organisation's total is kept by triggers
//! (migrations 000014, 000017), so a check reads one row however many
//! monitors it has. Only a change that raises the load is refused: one that
//! lowers or keeps it (pausing, a longer interval, fewer regions) always
//! goes through, so an organisation left over a lowered budget can still
//! get back under it.

use crate::http::error::ApiError;
use crate::settings::QuotaSettings;
use diesel_async::AsyncPgConnection;
use uptime_db::models::MonitorDefinition;
use uptime_db::quotas::{Owned, QuotaOverrides};

/// The quota's name, as it appears in a 403's `details[].field`.
pub fn name(what: Owned) -> &'static str {
    match what {
        Owned::Monitors => "monitors",
        Owned::AlertContacts => "alert_contacts",
        Owned::ApiKeys => "api_keys",
    }
}

/// The organisation's limit: its override, else the default.
pub fn limit(defaults: &QuotaSettings, overrides: &QuotaOverrides, what: Owned) -> i64 {
    match what {
        Owned::Monitors => overrides.monitors.unwrap_or(defaults.monitors),
        Owned::AlertContacts => overrides.alert_contacts.unwrap_or(defaults.alert_contacts),
        Owned::ApiKeys => overrides.api_keys.unwrap_or(defaults.api_keys),
    }
}

/// The organisation's checks-per-minute budget: its override, else the
/// default.
pub fn checks_per_minute_limit(defaults: &QuotaSettings, overrides: &QuotaOverrides) -> i64 {
    overrides
        .checks_per_minute
        .unwrap_or(defaults.checks_per_minute)
}

/// What a monitor of this definition adds to its owner's load, in
/// thousandths of a check per minute: its cost while active, nothing while
/// paused.
pub fn load_of(definition: &MonitorDefinition) -> i64 {
    if definition.active {
        i64::from(definition.check_load_millis)
    } else {
        0
    }
}

/// 403 unless a load of `would_make` thousandths fits the budget.
fn ensure_load_fits(limit: i64, would_make: i64) -> Result<(), ApiError> {
    if would_make > limit.saturating_mul(1000) {
        return Err(ApiError::CheckLoadExceeded {
            limit,
            would_make_millis: would_make,
        });
    }
    Ok(())
}

/// 403 `quota exceeded` unless the organisation may own `more` monitors more that
/// add `load` thousandths of a check per minute (see [`load_of`]): both the
/// monitor quota and the load budget, read in one statement under the lock
/// of the organisation's row. Run it in the transaction that inserts. A load of 0
/// (heartbeats, paused monitors) is never refused for the budget.
pub async fn ensure_room_for_monitors(
    conn: &mut AsyncPgConnection,
    defaults: &QuotaSettings,
    org_id: i64,
    more: i64,
    load: i64,
) -> Result<(), ApiError> {
    let locked = uptime_db::quotas::lock_quotas(conn, org_id, None).await?;
    let limit = limit(defaults, &locked.overrides, Owned::Monitors);
    if locked.monitor_count + more > limit {
        return Err(ApiError::QuotaExceeded {
            quota: name(Owned::Monitors),
            limit,
        });
    }
    if load > 0 {
        let budget = checks_per_minute_limit(defaults, &locked.overrides);
        ensure_load_fits(budget, locked.check_load_millis + load)?;
    }
    Ok(())
}

/// 403 `quota exceeded` if changing the organisation's monitor `monitor_id` so that
/// it adds `load` (see [`load_of`]) raises its load past the budget. Run
/// it in the transaction that updates, after the monitor's row is locked: it
/// locks the organisation's row too, so concurrent changes and creates of one
/// organisation
/// are counted one after the other. A change that lowers or keeps the load
/// is allowed even over the budget, and one to no load at all (pausing)
/// takes no lock.
pub async fn ensure_load_for_change(
    conn: &mut AsyncPgConnection,
    defaults: &QuotaSettings,
    org_id: i64,
    monitor_id: i64,
    load: i64,
) -> Result<(), ApiError> {
    if load == 0 {
        return Ok(());
    }
    let locked = uptime_db::quotas::lock_quotas(conn, org_id, Some(monitor_id)).await?;
    if load <= locked.monitor_load_millis {
        return Ok(());
    }
    let budget = checks_per_minute_limit(defaults, &locked.overrides);
    ensure_load_fits(
        budget,
        locked.check_load_millis - locked.monitor_load_millis + load,
    )
}

/// 403 `quota exceeded` unless the organisation may own one more. Run it inside the
/// transaction that inserts: it locks the organisation's row, so concurrent
/// creates of one organisation are counted one after the other and cannot overshoot.
pub async fn ensure_room(
    conn: &mut AsyncPgConnection,
    defaults: &QuotaSettings,
    org_id: i64,
    what: Owned,
) -> Result<(), ApiError> {
    ensure_room_for(conn, defaults, org_id, what, 1).await
}

/// Like [`ensure_room`], for `more` at once (a bulk create): all fit or 403.
pub async fn ensure_room_for(
    conn: &mut AsyncPgConnection,
    defaults: &QuotaSettings,
    org_id: i64,
    what: Owned,
    more: i64,
) -> Result<(), ApiError> {
    let (overrides, owned) = uptime_db::quotas::lock_for_quota(conn, org_id, what).await?;
    let limit = limit(defaults, &overrides, what);
    if owned + more > limit {
        return Err(ApiError::QuotaExceeded {
            quota: name(what),
            limit,
        });
    }
    Ok(())
}

/// `api-gateway set-quota`: sets the overrides given for the organisation
/// named by id or name; returns its effective quotas as `(name, limit)`.
pub async fn set_for_organisation(
    pool: &uptime_db::Pool,
    defaults: &QuotaSettings,
    organisation: &str,
    changes: &QuotaOverrides,
) -> anyhow::Result<(
    uptime_db::organisations::Organisation,
    Vec<(&'static str, i64)>,
)> {
    for value in [
        changes.monitors,
        changes.alert_contacts,
        changes.api_keys,
        changes.checks_per_minute,
    ]
    .into_iter()
    .flatten()
    {
        anyhow::ensure!(value >= 0, "a quota cannot be negative ({value})");
    }
    let mut conn = uptime_db::pool::conn(pool).await?;
    let organisation = uptime_db::organisations::find(&mut conn, organisation)
        .await?
        .map_err(anyhow::Error::msg)?;
    let stored = uptime_db::quotas::set(&mut conn, organisation.id, changes).await?;
    let mut effective: Vec<_> = [Owned::Monitors, Owned::AlertContacts, Owned::ApiKeys]
        .into_iter()
        .map(|what| (name(what), limit(defaults, &stored, what)))
        .collect();
    effective.push((
        crate::http::error::CHECKS_PER_MINUTE,
        checks_per_minute_limit(defaults, &stored),
    ));
    Ok((organisation, effective))
}
