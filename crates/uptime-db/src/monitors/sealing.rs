//! Keeping every stored basic-auth password sealed with the current key
//!, run by the api-gateway at its start:
//!
//! 1. **Legacy plain text.** Rows written before migration 000015 (or by a
//!    gateway from before it, during a rolling upgrade) hold the password in
//!    `http_password`. Each is sealed into `http_password_sealed` and the
//!    plain-text column is cleared, in the same statement.
//! 2. **Rotation.** Values sealed with a key other than the keyring's
//!    current one are opened and sealed again with the current key, so the
//!    old key can be removed once a start has finished this.
//!
//! Both go in bounded batches (one short transaction each, rows locked
//! `FOR UPDATE` in id order, keyset-paged), so a million monitors never
//! make one long transaction, and several replicas starting together do
//! not do a row twice: the second one's lock waits for the first, after
//! which the row no longer matches and is passed over. Neither changes
//! `updated_at` or `definition_version`: what a check does stays the same.

use crate::models::SealedText;
use crate::pool::{conn, Pool};
use crate::schema::monitors;
use crate::DbError;
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use uptime_secrets::{Keyring, Purpose, SecretError, Zeroizing, FORMAT};

const PURPOSE: Purpose = Purpose::HTTP_BASIC_AUTH_PASSWORD;

/// What one run did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SealingReport {
    /// Legacy plain-text passwords sealed (and their plain text cleared).
    pub sealed_plaintext: u64,
    /// Values sealed again with the current key.
    pub resealed: u64,
    /// Values no configured key opens (logged with their monitor and key
    /// id, left as they are: their checks fail saying so).
    pub unopenable: u64,
}

/// Why a run stopped.
#[derive(Debug, thiserror::Error)]
pub enum SealingError {
    #[error(transparent)]
    Db(#[from] DbError),
    #[error("sealing a password: {0}")]
    Seal(#[source] SecretError),
}

impl From<diesel::result::Error> for SealingError {
    fn from(e: diesel::result::Error) -> Self {
        SealingError::Db(DbError::Query(e))
    }
}

/// How many rows hold a legacy plain-text password (which only a keyring
/// can seal).
pub async fn plaintext_count(pool: &Pool) -> Result<i64, SealingError> {
    let mut conn = conn(pool).await?;
    Ok(monitors::table
        .filter(monitors::http_password.is_not_null())
        .count()
        .get_result(&mut conn)
        .await?)
}

/// Seals every legacy plain-text password and re-seals every value sealed
/// with another key than `keyring`'s current one, `batch_size` rows per
/// transaction.
pub async fn seal_passwords(
    pool: &Pool,
    keyring: &Keyring,
    batch_size: i64,
) -> Result<SealingReport, SealingError> {
    let batch_size = batch_size.max(1);
    let mut conn = conn(pool).await?;
    let mut report = SealingReport::default();
    let mut after = i64::MIN;
    while let Some(last) =
        plaintext_batch(&mut conn, keyring, after, batch_size, &mut report).await?
    {
        after = last;
    }
    let mut after = i64::MIN;
    while let Some(last) =
        rotation_batch(&mut conn, keyring, after, batch_size, &mut report).await?
    {
        after = last;
    }
    Ok(report)
}

/// Seals the legacy plain-text passwords of up to `limit` rows past `after`;
/// the last id done, `None` when none was left.
async fn plaintext_batch(
    conn: &mut AsyncPgConnection,
    keyring: &Keyring,
    after: i64,
    limit: i64,
    report: &mut SealingReport,
) -> Result<Option<i64>, SealingError> {
    let (last, n) = conn
        .transaction::<_, SealingError, _>(|c| {
            async move {
                let rows: Vec<(i64, String)> = monitors::table
                    .filter(monitors::http_password.is_not_null())
                    .filter(monitors::id.gt(after))
                    .order(monitors::id.asc())
                    .limit(limit)
                    .select((monitors::id, monitors::http_password.assume_not_null()))
                    .for_update()
                    .load(c)
                    .await?;
                let last = rows.last().map(|(id, _)| *id);
                let n = rows.len() as u64;
                for (id, plain) in rows {
                    let plain = Zeroizing::new(plain);
                    // An empty password was always stored as none.
                    let sealed = match plain.is_empty() {
                        true => None,
                        false => Some(SealedText::new(
                            keyring.seal(PURPOSE, &plain).map_err(SealingError::Seal)?,
                        )),
                    };
                    diesel::update(monitors::table.filter(monitors::id.eq(id)))
                        .set((
                            monitors::http_password_sealed.eq(sealed),
                            monitors::http_password.eq(None::<String>),
                        ))
                        .execute(c)
                        .await?;
                }
                Ok((last, n))
            }
            .scope_boxed()
        })
        .await?;
    report.sealed_plaintext += n;
    Ok(last)
}

/// Re-seals with the current key up to `limit` rows past `after` sealed
/// with another; the last id looked at, `None` when none was left.
async fn rotation_batch(
    conn: &mut AsyncPgConnection,
    keyring: &Keyring,
    after: i64,
    limit: i64,
    report: &mut SealingReport,
) -> Result<Option<i64>, SealingError> {
    // Key ids may hold '_', LIKE's any-character: taken literally.
    let current = format!(
        "{FORMAT}.{}.%",
        crate::like_literal(keyring.current_key_id())
    );
    let (last, resealed, unopenable) = conn
        .transaction::<_, SealingError, _>(|c| {
            async move {
                let rows: Vec<(i64, SealedText)> = monitors::table
                    .filter(monitors::http_password_sealed.is_not_null())
                    .filter(monitors::http_password_sealed.not_like(current).escape('\\'))
                    .filter(monitors::id.gt(after))
                    .order(monitors::id.asc())
                    .limit(limit)
                    .select((monitors::id, monitors::http_password_sealed.assume_not_null()))
                    .for_update()
                    .load(c)
                    .await?;
                let last = rows.last().map(|(id, _)| *id);
                let (mut resealed, mut unopenable) = (0, 0);
                for (id, old) in rows {
                    let plain = match keyring.open(PURPOSE, old.as_str()) {
                        Ok(plain) => plain,
                        Err(error) => {
                            // Left as it is: a key may be missing from this
                            // replica's configuration only. Its checks fail
                            // saying which key they need.
                            tracing::warn!(monitor_id = id, %error,
                                "a stored basic-auth password does not open with any configured key; left as it is");
                            unopenable += 1;
                            continue;
                        }
                    };
                    let sealed = keyring.seal(PURPOSE, &plain).map_err(SealingError::Seal)?;
                    diesel::update(monitors::table.filter(monitors::id.eq(id)))
                        .set(monitors::http_password_sealed.eq(SealedText::new(sealed)))
                        .execute(c)
                        .await?;
                    resealed += 1;
                }
                Ok((last, resealed, unopenable))
            }
            .scope_boxed()
        })
        .await?;
    report.resealed += resealed;
    report.unopenable += unopenable;
    Ok(last)
}
