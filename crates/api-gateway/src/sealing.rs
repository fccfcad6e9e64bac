//! Stored basic-auth passwords, sealed with the current key before the API
//! serves (the queries are `uptime_db::monitors::sealing`):
//! legacy plain-text passwords (rows from before migration 000015) are
//! sealed and their plain text cleared, and values sealed with a key that
//! is no longer `secrets.current_key_id` are sealed again (key rotation,
//! docs/operations.md); alert contacts' provider credentials are re-sealed
//! the same way (`uptime_db::contacts_sealing`), and Slack, Teams and Discord
//! webhook URLs still in plain text are sealed. Before serving, because a PATCH of a row whose
//! password is still in plain text would not see it (the API reads only
//! the sealed column) and would drop it.
//!
//! Without a key, a deployment with no such rows starts (and refuses new
//! passwords); one with legacy plain text refuses to start, since it can
//! neither seal nor, any longer, send those passwords.

use uptime_db::monitors::sealing::{self, SealingError, SealingReport};
use uptime_secrets::Keyring;

/// Rows per transaction.
pub const BATCH_SIZE: i64 = 500;

#[derive(Debug, thiserror::Error)]
pub enum StartupSealingError {
    #[error(
        "{0} monitors hold a plain-text basic-auth password, which must be sealed, and no \
         secrets key is configured: set secrets.keys and secrets.current_key_id \
         (UPTIME_SECRETS__KEYS__<ID>, UPTIME_SECRETS__CURRENT_KEY_ID)"
    )]
    NoKey(i64),
    #[error("sealing stored passwords: {0}")]
    Sealing(#[from] SealingError),
}

/// Seals what needs sealing with `keyring`, reporting how many rows it
/// changed (log line and `secrets_passwords_sealed_total{reason}`).
pub async fn seal_stored_passwords(
    pool: &uptime_db::Pool,
    keyring: Option<&Keyring>,
) -> Result<SealingReport, StartupSealingError> {
    let Some(keyring) = keyring else {
        return match sealing::plaintext_count(pool).await? {
            0 => Ok(SealingReport::default()),
            n => Err(StartupSealingError::NoKey(n)),
        };
    };
    let report = sealing::seal_passwords(pool, keyring, BATCH_SIZE).await?;
    metrics::counter!("secrets_passwords_sealed_total", "reason" => "plaintext")
        .increment(report.sealed_plaintext);
    metrics::counter!("secrets_passwords_sealed_total", "reason" => "rotation")
        .increment(report.resealed);
    metrics::gauge!("secrets_passwords_unopenable").set(report.unopenable as f64);
    tracing::info!(
        current_key_id = keyring.current_key_id(),
        sealed_plaintext = report.sealed_plaintext,
        resealed = report.resealed,
        unopenable = report.unopenable,
        "stored basic-auth passwords sealed with the current key"
    );
    // Alert contacts' provider credentials, likewise (rotation only).
    let contacts =
        uptime_db::contacts_sealing::reseal_contact_secrets(pool, keyring, BATCH_SIZE).await?;
    metrics::counter!("secrets_contact_credentials_resealed_total").increment(contacts.resealed);
    metrics::gauge!("secrets_contact_credentials_unopenable").set(contacts.unopenable as f64);
    tracing::info!(
        current_key_id = keyring.current_key_id(),
        resealed = contacts.resealed,
        unopenable = contacts.unopenable,
        "stored alert contact credentials sealed with the current key"
    );
    // Webhook URLs that are credentials, still in plain text (stored before
    // they were sealed, or by a gateway without a key).
    let kinds: Vec<&str> = uptime_alerts::Channel::ALL
        .into_iter()
        .filter(|c| c.address_is_credential())
        .map(|c| c.as_str())
        .collect();
    let addresses = uptime_db::contacts_sealing::seal_contact_addresses(
        pool,
        keyring,
        &kinds,
        &uptime_alerts::address::redact,
        BATCH_SIZE,
    )
    .await?;
    metrics::counter!("secrets_contact_addresses_sealed_total").increment(addresses);
    tracing::info!(
        sealed = addresses,
        "webhook URLs that are credentials sealed"
    );
    Ok(report)
}
