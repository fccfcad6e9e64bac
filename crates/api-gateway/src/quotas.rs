//! Per-user quotas: configured defaults (`[quotas]`), raised or lowered for
//! one user by `api-gateway set-quota` (stored in `user_quotas`).

use crate::error::ApiError;
use crate::settings::QuotaSettings;
use diesel_async::AsyncPgConnection;
use uptime_db::quotas::{Owned, QuotaOverrides};

/// The quota's name, as it appears in a 403's `details[].field`.
pub fn name(what: Owned) -> &'static str {
    match what {
        Owned::Monitors => "monitors",
        Owned::AlertContacts => "alert_contacts",
        Owned::ApiKeys => "api_keys",
    }
}

/// The user's limit: their override, else the default.
pub fn limit(defaults: &QuotaSettings, overrides: &QuotaOverrides, what: Owned) -> i64 {
    match what {
        Owned::Monitors => overrides.monitors.unwrap_or(defaults.monitors),
        Owned::AlertContacts => overrides.alert_contacts.unwrap_or(defaults.alert_contacts),
        Owned::ApiKeys => overrides.api_keys.unwrap_or(defaults.api_keys),
    }
}

/// 403 `quota exceeded` unless the user may own one more. Run it inside the
/// transaction that inserts: it locks the user's row, so concurrent creates
/// of one user are counted one after the other and cannot overshoot.
pub async fn ensure_room(
    conn: &mut AsyncPgConnection,
    defaults: &QuotaSettings,
    user_id: i64,
    what: Owned,
) -> Result<(), ApiError> {
    ensure_room_for(conn, defaults, user_id, what, 1).await
}

/// Like [`ensure_room`], for `more` at once (a bulk create): all fit or 403.
pub async fn ensure_room_for(
    conn: &mut AsyncPgConnection,
    defaults: &QuotaSettings,
    user_id: i64,
    what: Owned,
    more: i64,
) -> Result<(), ApiError> {
    let (overrides, owned) = uptime_db::quotas::lock_for_quota(conn, user_id, what).await?;
    let limit = limit(defaults, &overrides, what);
    if owned + more > limit {
        return Err(ApiError::QuotaExceeded {
            quota: name(what),
            limit,
        });
    }
    Ok(())
}

/// `api-gateway set-quota`: sets the overrides given for the user named by
/// id or name; returns the user's effective quotas as `(name, limit)`.
pub async fn set_for_user(
    pool: &uptime_db::Pool,
    defaults: &QuotaSettings,
    user: &str,
    changes: &QuotaOverrides,
) -> anyhow::Result<(uptime_db::models::User, Vec<(&'static str, i64)>)> {
    for value in [changes.monitors, changes.alert_contacts, changes.api_keys]
        .into_iter()
        .flatten()
    {
        anyhow::ensure!(value >= 0, "a quota cannot be negative ({value})");
    }
    let mut conn = uptime_db::pool::conn(pool).await?;
    let user = uptime_db::users::find(&mut conn, user)
        .await?
        .map_err(anyhow::Error::msg)?;
    let stored = uptime_db::quotas::set(&mut conn, user.id, changes).await?;
    let effective = [Owned::Monitors, Owned::AlertContacts, Owned::ApiKeys]
        .into_iter()
        .map(|what| (name(what), limit(defaults, &stored, what)))
        .collect();
    Ok((user, effective))
}
