//! The quotas of an apply's end state.

use crate::error::ApiError;
use diesel_async::AsyncPgConnection;
use uptime_db::quotas::Owned;

/// 403 when the end state passes a quota: more monitors or contacts than
/// the organisation may own, or a checks-per-minute load past the budget
/// that the apply raised (an apply that lowers or keeps an excess passes).
pub(super) async fn check_end_state(
    c: &mut AsyncPgConnection,
    quotas: &crate::settings::QuotaSettings,
    org_id: i64,
    load_before: i64,
) -> Result<(), ApiError> {
    let locked = uptime_db::quotas::lock_quotas(c, org_id, None).await?;
    let limit = crate::quotas::limit(quotas, &locked.overrides, Owned::Monitors);
    if locked.monitor_count > limit {
        return Err(ApiError::QuotaExceeded {
            quota: crate::quotas::name(Owned::Monitors),
            limit,
        });
    }
    let budget = crate::quotas::checks_per_minute_limit(quotas, &locked.overrides);
    if locked.check_load_millis > load_before
        && locked.check_load_millis > budget.saturating_mul(1000)
    {
        return Err(ApiError::CheckLoadExceeded {
            limit: budget,
            would_make_millis: locked.check_load_millis,
        });
    }
    crate::quotas::ensure_room_for(c, quotas, org_id, Owned::AlertContacts, 0).await
}
