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

use crate::monitors::sealing::{in_locked_batches, SealingError, SealingReport};
use crate::pool::{conn, Pool};
use crate::schema::alert_contacts;
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, RunQueryDsl};
use uptime_secrets::{Keyring, Purpose};

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
    Ok(in_locked_batches!(
        rotate &mut conn, batch_size, keyring, PURPOSE,
        alert_contacts::secret_sealed, |sealed| sealed,
        unopenable |id, error| {
            // Left as it is: the key may be missing from this replica only.
            // Its deliveries fail saying so.
            tracing::warn!(contact_id = id, %error,
                "a stored contact credential does not open with any configured key; left as it is");
        }
    ))
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
    let kinds = &kinds;
    let (_, sealed) = in_locked_batches!(
        &mut conn,
        batch_size,
        alert_contacts,
        (alert_contacts::value) where [
            alert_contacts::kind.eq_any(kinds),
            alert_contacts::secret_sealed.is_null(),
        ],
        |_id, value| {
            let value = uptime_secrets::Zeroizing::new(value);
            let seal = keyring.seal(PURPOSE, &value).map_err(SealingError::Seal)?;
            Some((
                alert_contacts::secret_sealed.eq(seal),
                alert_contacts::value.eq(redact(&value)),
            ))
        }
    );
    Ok(sealed)
}
