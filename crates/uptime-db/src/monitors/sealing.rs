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
use diesel_async::{AsyncConnection, RunQueryDsl};
use uptime_secrets::{Keyring, Purpose, SecretError, Zeroizing, FORMAT};

/// Every sealing pass (monitors' passwords, contacts' credentials and
/// addresses): the rows of `$table` matching the filters, as `(id,
/// $column)`, in keyset-paged batches of `$batch_size`, one transaction
/// each, locked `FOR UPDATE` in id order (replicas starting together share
/// the work and never do a row twice). For each row `$change` gives the
/// columns to set on it (`None`: left as it is; `?` stops the run). Runs
/// until a batch finds no row; how many rows it looked at and how many it
/// changed. Filters are built again for each batch: what they capture must
/// be `Copy` (a `&str`, a reference).
///
/// The `rotate` form is the key rotation of one sealed column: every value
/// sealed with another key than the current one is opened and sealed again
/// (`$stored` makes the column value of the new sealed text); one no key
/// opens is left as it is after `$unopenable` said so. Its [`SealingReport`]
/// (nothing sealed from plain text).
macro_rules! in_locked_batches {
    (rotate $conn:expr, $batch_size:expr, $keyring:expr, $purpose:expr,
     $table:ident::$column:ident, |$sealed:ident| $stored:expr,
     unopenable |$id:ident, $error:ident| $unopenable:expr) => {{
        let keyring: &uptime_secrets::Keyring = $keyring;
        let current = $crate::monitors::sealing::current_key_pattern(keyring);
        let current = current.as_str();
        let (seen, resealed) = $crate::monitors::sealing::in_locked_batches!(
            $conn,
            $batch_size,
            $table,
            ($table::$column.assume_not_null()) where [
                $table::$column.is_not_null(),
                $table::$column.not_like(current).escape('\\'),
            ],
            |$id, old| {
                $crate::monitors::sealing::resealed(keyring, $purpose, &old, |$error| $unopenable)?
                    .map(|$sealed| $table::$column.eq($stored))
            }
        );
        $crate::monitors::sealing::SealingReport {
            sealed_plaintext: 0,
            resealed,
            unopenable: seen - resealed,
        }
    }};
    ($conn:expr, $batch_size:expr, $table:ident, ($column:expr) where [$($filter:expr),+ $(,)?],
     |$id:pat_param, $value:ident| $change:expr) => {{
        let conn: &mut diesel_async::AsyncPgConnection = $conn;
        let (mut seen, mut changed, mut after) = (0u64, 0u64, i64::MIN);
        loop {
            let (last, batch_seen, batch_changed) = conn
                .transaction::<_, $crate::monitors::sealing::SealingError, _>(|c| {
                    async move {
                        let rows: Vec<(i64, String)> = $table::table
                            $(.filter($filter))+
                            .filter($table::id.gt(after))
                            .order($table::id.asc())
                            .limit($batch_size)
                            .select(($table::id, $column))
                            .for_update()
                            .load(c)
                            .await?;
                        let last = rows.last().map(|(id, _)| *id);
                        let (batch_seen, mut batch_changed) = (rows.len() as u64, 0u64);
                        for (row_id, $value) in rows {
                            let $id = row_id;
                            if let Some(change) = $change {
                                diesel::update($table::table.filter($table::id.eq(row_id)))
                                    .set(change)
                                    .execute(c)
                                    .await?;
                                batch_changed += 1;
                            }
                        }
                        Ok((last, batch_seen, batch_changed))
                    }
                    .scope_boxed()
                })
                .await?;
            seen += batch_seen;
            changed += batch_changed;
            match last {
                Some(last) => after = last,
                None => break (seen, changed),
            }
        }
    }};
}
pub(crate) use in_locked_batches;

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
    let (plaintext, _) = in_locked_batches!(
        &mut conn,
        batch_size,
        monitors,
        (monitors::http_password.assume_not_null()) where [monitors::http_password.is_not_null()],
        |_id, plain| {
            let plain = Zeroizing::new(plain);
            // An empty password was always stored as none.
            let sealed = match plain.is_empty() {
                true => None,
                false => Some(SealedText::new(
                    keyring.seal(PURPOSE, &plain).map_err(SealingError::Seal)?,
                )),
            };
            Some((
                monitors::http_password_sealed.eq(sealed),
                monitors::http_password.eq(None::<String>),
            ))
        }
    );
    let rotation = in_locked_batches!(
        rotate &mut conn, batch_size, keyring, PURPOSE,
        monitors::http_password_sealed, |sealed| SealedText::new(sealed),
        unopenable |id, error| {
            // Left as it is: a key may be missing from this replica's
            // configuration only. Its checks fail saying which key they
            // need.
            tracing::warn!(monitor_id = id, %error,
                "a stored basic-auth password does not open with any configured key; left as it is");
        }
    );
    Ok(SealingReport {
        sealed_plaintext: plaintext,
        ..rotation
    })
}

/// What the values sealed with the current key look like, as a `LIKE`
/// pattern: the rows a rotation passes over.
pub(crate) fn current_key_pattern(keyring: &Keyring) -> String {
    // Key ids may hold '_', LIKE's any-character: taken literally.
    format!(
        "{FORMAT}.{}.%",
        crate::like_literal(keyring.current_key_id())
    )
}

/// `old` opened and sealed again with the current key; `None`, after
/// `unopenable` was told why, when no configured key opens it.
pub(crate) fn resealed(
    keyring: &Keyring,
    purpose: Purpose,
    old: &str,
    unopenable: impl FnOnce(&SecretError),
) -> Result<Option<String>, SealingError> {
    match keyring.open(purpose, old) {
        Ok(plain) => Ok(Some(
            keyring.seal(purpose, &plain).map_err(SealingError::Seal)?,
        )),
        Err(error) => {
            unopenable(&error);
            Ok(None)
        }
    }
}
