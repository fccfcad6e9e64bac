//! Secrets kept for users (the basic-auth password of an http monitor, the
//! credential of an alert provider's contact), sealed wherever they rest or travel: in the database and in
//! the due checks on NATS. Only the services that must see the plaintext
//! hold a key: the api-gateway (which seals what users give it), the
//! checker (which opens a password just before its request) and the
//! notifier (which opens a contact's credential just before its delivery).
//!
//! A sealed value is text: `v1.<key id>.<base64url(nonce ‖ ciphertext)>`,
//! AES-256-GCM with a random 96-bit nonce. Its associated data binds it to
//! the format, the key id and its [`Purpose`], so a value sealed for one
//! use does not open as another, and a key id edited in the text does not
//! open with another key. A [`Keyring`] holds keys by id: the current one
//! seals, every listed one opens, which is what key rotation needs (add a
//! key, make it current, re-seal, remove the old one; docs/operations.md).
//!
//! Errors never quote a plaintext or a sealed value; opened plaintexts are
//! wiped from memory when dropped ([`Zeroizing`]).
//!
//! One module: sealing and opening are this file; their unit tests are `tests.rs`.

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use base64::Engine as _;
use rand::RngCore;
use std::collections::BTreeMap;
use uptime_config::SecretsSettings;
pub use zeroize::Zeroizing;

/// The format version, the first part of every sealed value.
pub const FORMAT: &str = "v1";
/// Bytes of a key (AES-256).
pub const KEY_BYTES: usize = 32;
const NONCE_BYTES: usize = 12;
const TAG_BYTES: usize = 16;
/// Longest key id.
pub const MAX_KEY_ID_CHARS: usize = 32;

/// What a sealed value is for. It is part of the associated data, so a
/// value opens only for the purpose it was sealed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Purpose(&'static str);

impl Purpose {
    /// The basic-auth password of an http or keyword monitor
    /// (`monitors.http_password_sealed`, and `password_sealed` in
    /// `check-due.v5`).
    pub const HTTP_BASIC_AUTH_PASSWORD: Purpose = Purpose("monitors.http_password");
    /// An alert contact's provider credential (routing key, API key, bot
    /// token, application token, access token):
    /// `alert_contacts.secret_sealed`.
    pub const ALERT_CONTACT_SECRET: Purpose = Purpose("alert_contacts.secret");

    pub fn as_str(self) -> &'static str {
        self.0
    }
}

/// Why a keyring could not be built or a value not sealed or opened. No
/// variant carries key material, a plaintext or a sealed value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    #[error("no secrets key is configured (secrets.keys, secrets.current_key_id)")]
    NotConfigured,
    #[error("secrets.current_key_id is not set: name the key of secrets.keys that seals")]
    NoCurrentKey,
    #[error("secrets.current_key_id {0:?} is not one of secrets.keys")]
    UnknownCurrentKey(String),
    #[error(
        "secrets key id {0:?} is not a key id: 1 to {MAX_KEY_ID_CHARS} of a-z, 0-9, '-' and '_'"
    )]
    InvalidKeyId(String),
    #[error("secrets key {0:?} is not {KEY_BYTES} bytes in base64")]
    InvalidKey(String),
    #[error("not a sealed secret (expected {FORMAT}.<key id>.<base64url>)")]
    Malformed,
    #[error("sealed with key {0:?}, which is not configured here (secrets.keys)")]
    UnknownKey(String),
    #[error(
        "does not open with key {0:?}: altered, sealed for another purpose, \
         or another key configured under that id"
    )]
    DoesNotOpen(String),
    #[error("sealing failed")]
    Seal,
}

/// Whether `id` may name a key: it becomes part of every sealed value (so
/// no `.`), and environment keys are lowercased (`uptime-config`), so only
/// lowercase.
pub fn is_valid_key_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_KEY_ID_CHARS
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

/// The key id a sealed value names, if it is one.
pub fn key_id_of(sealed: &str) -> Option<&str> {
    let mut parts = sealed.splitn(3, '.');
    let (Some(FORMAT), Some(id), Some(_)) = (parts.next(), parts.next(), parts.next()) else {
        return None;
    };
    is_valid_key_id(id).then_some(id)
}

/// Keys by id: [`Keyring::current_key_id`] seals, any of them opens.
#[derive(Clone)]
pub struct Keyring {
    current: String,
    keys: BTreeMap<String, Aes256Gcm>,
}

impl std::fmt::Debug for Keyring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keyring")
            .field("current", &self.current)
            .field("key_ids", &self.keys.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Keyring {
    /// A keyring of `keys`, sealing with `current_key_id`.
    pub fn new<I, K>(current_key_id: &str, keys: I) -> Result<Self, SecretError>
    where
        I: IntoIterator<Item = (K, Zeroizing<[u8; KEY_BYTES]>)>,
        K: Into<String>,
    {
        let mut ring = BTreeMap::new();
        for (id, key) in keys {
            let id = id.into();
            if !is_valid_key_id(&id) {
                return Err(SecretError::InvalidKeyId(id));
            }
            let cipher = Aes256Gcm::new_from_slice(&key[..])
                .map_err(|_| SecretError::InvalidKey(id.clone()))?;
            ring.insert(id, cipher);
        }
        if ring.is_empty() {
            return Err(SecretError::NotConfigured);
        }
        if current_key_id.is_empty() {
            return Err(SecretError::NoCurrentKey);
        }
        if !ring.contains_key(current_key_id) {
            return Err(SecretError::UnknownCurrentKey(current_key_id.to_string()));
        }
        Ok(Self {
            current: current_key_id.to_string(),
            keys: ring,
        })
    }

    /// The keyring `settings` describe; `Ok(None)` when they list no key
    /// (what needs one then says so when it does), an error when they are
    /// wrong (a service refuses to start on it).
    pub fn from_settings(settings: &SecretsSettings) -> Result<Option<Self>, SecretError> {
        if !settings.is_configured() {
            return Ok(None);
        }
        let mut keys = Vec::with_capacity(settings.keys.len());
        for (id, text) in &settings.keys {
            let key = decode_key(text).ok_or_else(|| SecretError::InvalidKey(id.clone()))?;
            keys.push((id.clone(), key));
        }
        Self::new(&settings.current_key_id, keys).map(Some)
    }

    /// The id of the key that seals.
    pub fn current_key_id(&self) -> &str {
        &self.current
    }

    /// Whether `sealed` was sealed with the current key (else re-sealing it
    /// is due: key rotation).
    pub fn is_current(&self, sealed: &str) -> bool {
        key_id_of(sealed) == Some(self.current.as_str())
    }

    /// `plaintext` sealed with the current key for `purpose`.
    pub fn seal(&self, purpose: Purpose, plaintext: &str) -> Result<String, SecretError> {
        let cipher = &self.keys[&self.current];
        let mut nonce = [0u8; NONCE_BYTES];
        rand::rngs::OsRng.fill_bytes(&mut nonce);
        let aad = associated_data(&self.current, purpose);
        let ciphertext = cipher
            .encrypt(
                Nonce::from_slice(&nonce),
                Payload {
                    msg: plaintext.as_bytes(),
                    aad: aad.as_bytes(),
                },
            )
            .map_err(|_| SecretError::Seal)?;
        let mut body = Vec::with_capacity(NONCE_BYTES + ciphertext.len());
        body.extend_from_slice(&nonce);
        body.extend_from_slice(&ciphertext);
        Ok(format!(
            "{FORMAT}.{}.{}",
            self.current,
            URL_SAFE_NO_PAD.encode(body)
        ))
    }

    /// Whether `sealed` holds `plain` for `purpose` (never when it cannot be
    /// opened with this keyring). A write that restates a stored secret
    /// keeps the stored seal when it does: a new seal of the same text
    /// would differ, and the write would look like a change.
    pub fn holds(&self, purpose: Purpose, sealed: &str, plain: &str) -> bool {
        self.open(purpose, sealed)
            .is_ok_and(|opened| opened.as_str() == plain)
    }

    /// The plaintext of `sealed`, which must have been sealed for `purpose`
    /// with one of this keyring's keys.
    pub fn open(&self, purpose: Purpose, sealed: &str) -> Result<Zeroizing<String>, SecretError> {
        let id = key_id_of(sealed).ok_or(SecretError::Malformed)?;
        let encoded = &sealed[FORMAT.len() + 1 + id.len() + 1..];
        let body = URL_SAFE_NO_PAD
            .decode(encoded)
            .map_err(|_| SecretError::Malformed)?;
        if body.len() < NONCE_BYTES + TAG_BYTES {
            return Err(SecretError::Malformed);
        }
        let cipher = self
            .keys
            .get(id)
            .ok_or_else(|| SecretError::UnknownKey(id.to_string()))?;
        let (nonce, ciphertext) = body.split_at(NONCE_BYTES);
        let aad = associated_data(id, purpose);
        let plain = cipher
            .decrypt(
                Nonce::from_slice(nonce),
                Payload {
                    msg: ciphertext,
                    aad: aad.as_bytes(),
                },
            )
            .map(Zeroizing::new)
            .map_err(|_| SecretError::DoesNotOpen(id.to_string()))?;
        // Sealed from a `&str`, so only a forged value fails here.
        let text =
            std::str::from_utf8(&plain).map_err(|_| SecretError::DoesNotOpen(id.to_string()))?;
        Ok(Zeroizing::new(text.to_string()))
    }
}

fn associated_data(key_id: &str, purpose: Purpose) -> String {
    format!("uptime-secrets.{FORMAT}.{key_id}.{}", purpose.as_str())
}

/// 32 bytes from base64 in any of its usual spellings (a trailing newline,
/// as `kubectl create secret --from-file` leaves, is fine).
fn decode_key(text: &str) -> Option<Zeroizing<[u8; KEY_BYTES]>> {
    let text = text.trim();
    let decoded = [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD]
        .iter()
        .find_map(|engine| engine.decode(text).ok())
        .map(Zeroizing::new)?;
    if decoded.len() != KEY_BYTES {
        return None;
    }
    let mut key = Zeroizing::new([0u8; KEY_BYTES]);
    key.copy_from_slice(&decoded);
    Some(key)
}

/// A new random key, in base64 (what `secrets.keys.<id>` takes).
pub fn generate_key() -> String {
    let mut key = Zeroizing::new([0u8; KEY_BYTES]);
    rand::rngs::OsRng.fill_bytes(key.as_mut());
    STANDARD.encode(key.as_ref())
}

#[cfg(test)]
mod tests;
