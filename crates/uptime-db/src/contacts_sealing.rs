//! Keeping alert contacts' provider credentials (`alert_contacts.secret_sealed`,
//! migration 000029) sealed with the current key, run by the api-gateway at
//! its start beside the monitors' passwords (`monitors::sealing`): values
//! sealed with a key other than the keyring's current one are opened and
//! sealed again, so the old key can be removed once a start has done this.
//! In bounded batches (one short transaction each, rows locked `FOR UPDATE`
//! in id order, keyset-paged), so replicas starting together share the work
//! and never do a row twice. `updated_at` is left alone: what the contact
//! is stays the same.
//!
//! Webhook URLs that are credentials (Slack, Teams, Discord) are sealed in
//! the same column; rows from before that, or written without a key, are
//! sealed at the start too ([`seal_contact_addresses`]).

use crate::monitors::sealing::{SealingError, SealingReport};
use crate::pool::{conn, Pool};
use crate::schema::alert_contacts;
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use uptime_secrets::{Keyring, Purpose, FORMAT};

const PURPOSE: Purpose = Purpose::ALERT_CONTACT_SECRET;

/// Re-seals every contact credential sealed with another key than
/// `keyring`'s current one, `batch_size` rows per transaction
/// (`sealed_plaintext` is always 0: credentials were never stored in plain
/// text).
pub async fn reseal_contact_secrets(
    pool: &Pool,
    keyring: &Keyring,
    batch_size: i64,
) -> Result<SealingReport, SealingError> {
    let batch_size = batch_size.max(1);
    let mut conn = conn(pool).await?;
    let mut report = SealingReport::default();
    let mut after = i64::MIN;
    while let Some(last) =
        rotation_batch(&mut conn, keyring, after, batch_size, &mut report).await?
    {
        after = last;
    }
    Ok(report)
}

/// Re-seals up to `limit` rows past `after` sealed with another key; the
/// last id looked at, `None` when none was left.
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
                let rows: Vec<(i64, String)> = alert_contacts::table
                    .filter(alert_contacts::secret_sealed.is_not_null())
                    .filter(alert_contacts::secret_sealed.not_like(current).escape('\\'))
                    .filter(alert_contacts::id.gt(after))
                    .order(alert_contacts::id.asc())
                    .limit(limit)
                    .select((alert_contacts::id, alert_contacts::secret_sealed.assume_not_null()))
                    .for_update()
                    .load(c)
                    .await?;
                let last = rows.last().map(|(id, _)| *id);
                let (mut resealed, mut unopenable) = (0, 0);
                for (id, old) in rows {
                    let plain = match keyring.open(PURPOSE, &old) {
                        Ok(plain) => plain,
                        Err(error) => {
                            // Left as it is: the key may be missing from
                            // this replica only. Its deliveries fail saying so.
                            tracing::warn!(contact_id = id, %error,
                                "a stored contact credential does not open with any configured key; left as it is");
                            unopenable += 1;
                            continue;
                        }
                    };
                    let sealed = keyring.seal(PURPOSE, &plain).map_err(SealingError::Seal)?;
                    diesel::update(alert_contacts::table.filter(alert_contacts::id.eq(id)))
                        .set(alert_contacts::secret_sealed.eq(sealed))
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

/// Seals the addresses that are credentials (webhook URLs of the `kinds`
/// given: Slack, Teams, Discord) still stored in plain text in `value`,
/// written before addresses were sealed or by a gateway without a key:
/// each is sealed into `secret_sealed` and `value` keeps `redact` of it,
/// in one statement per row, `batch_size` rows per transaction. How many
/// it sealed.
pub async fn seal_contact_addresses(
    pool: &Pool,
    keyring: &Keyring,
    kinds: &[&str],
    redact: &(dyn Fn(&str) -> String + Sync),
    batch_size: i64,
) -> Result<u64, SealingError> {
    let batch_size = batch_size.max(1);
    let mut conn = conn(pool).await?;
    let kinds: Vec<String> = kinds.iter().map(|k| k.to_string()).collect();
    let mut sealed = 0;
    let mut after = i64::MIN;
    loop {
        let kinds = &kinds;
        let (last, done) = conn
            .transaction::<_, SealingError, _>(|c| {
                async move {
                    let rows: Vec<(i64, String)> = alert_contacts::table
                        .filter(alert_contacts::kind.eq_any(kinds))
                        .filter(alert_contacts::secret_sealed.is_null())
                        .filter(alert_contacts::id.gt(after))
                        .order(alert_contacts::id.asc())
                        .limit(batch_size)
                        .select((alert_contacts::id, alert_contacts::value))
                        .for_update()
                        .load(c)
                        .await?;
                    let last = rows.last().map(|(id, _)| *id);
                    let mut done = 0;
                    for (id, value) in rows {
                        let value = uptime_secrets::Zeroizing::new(value);
                        let seal = keyring.seal(PURPOSE, &value).map_err(SealingError::Seal)?;
                        diesel::update(alert_contacts::table.filter(alert_contacts::id.eq(id)))
                            .set((
                                alert_contacts::secret_sealed.eq(seal),
                                alert_contacts::value.eq(redact(&value)),
                            ))
                            .execute(c)
                            .await?;
                        done += 1;
                    }
                    Ok((last, done))
                }
                .scope_boxed()
            })
            .await?;
        sealed += done;
        match last {
            Some(last) => after = last,
            None => return Ok(sealed),
        }
    }
}
