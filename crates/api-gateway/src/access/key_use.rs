//! "Logins by key", audited in a bounded form: a key's use leaves one
//! audit entry (`use` on `api_key`) when it is the key's first, or the
//! first after [`IDLE_BEFORE_AUDITED`] without any. The entry is written
//! in the transaction that writes the key's `last_used_at`, which happens
//! at most once a minute per key (`auth_cache::TOUCH_GAP_SECS`), never per
//! request; the database's previous `last_used_at` decides, so replicas
//! sharing a key write one entry between them.

use crate::access::principal::AuthUser;
use crate::http::error::ApiError;
use chrono::{DateTime, Utc};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection};
use serde_json::json;

/// A use after this long without any is audited again.
pub const IDLE_BEFORE_AUDITED: chrono::Duration = chrono::Duration::hours(1);

/// Writes the key's `last_used_at` (unless written within `min_gap`) and,
/// when the use ends an idle spell, its audit entry, together.
pub async fn touch(
    conn: &mut AsyncPgConnection,
    user: &AuthUser,
    now: DateTime<Utc>,
    min_gap: chrono::Duration,
) -> Result<(), ApiError> {
    let user = user.clone();
    conn.transaction::<_, ApiError, _>(|c| {
        async move {
            let Some(previous) = uptime_db::api_keys::touch(c, user.key_id, now, min_gap).await?
            else {
                return Ok(());
            };
            if previous.is_none_or(|at| now - at >= IDLE_BEFORE_AUDITED) {
                crate::audit::record(
                    c,
                    &user,
                    crate::audit::action::USE,
                    crate::audit::kind::API_KEY,
                    Some(user.key_id),
                    json!({"last_used_at": {"before": previous, "after": now}}),
                )
                .await?;
            }
            Ok(())
        }
        .scope_boxed()
    })
    .await
}
