//! API keys: `upt_` + 40 base62 characters. Only the SHA-256 digest is stored.

use crate::http::error::ApiError;
use rand::distributions::{Alphanumeric, DistString};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

pub const KEY_PREFIX: &str = "upt_";
const RANDOM_LEN: usize = 40;
/// Characters of the raw key shown back as `prefix`.
pub const SHOWN_PREFIX_LEN: usize = 8;

/// A new raw key from the operating system's CSPRNG (base62 = `Alphanumeric`).
pub fn generate() -> String {
    let random = Alphanumeric.sample_string(&mut rand::rngs::OsRng, RANDOM_LEN);
    format!("{KEY_PREFIX}{random}")
}

/// Hex SHA-256 of a raw key or token.
pub fn digest(raw: &str) -> String {
    hex::encode(Sha256::digest(raw.as_bytes()))
}

/// Whether `raw` has the shape of a key, so malformed ones never reach the database.
pub fn well_formed(raw: &str) -> bool {
    raw.len() == KEY_PREFIX.len() + RANDOM_LEN
        && raw.starts_with(KEY_PREFIX)
        && raw[KEY_PREFIX.len()..]
            .bytes()
            .all(|b| b.is_ascii_alphanumeric())
}

/// Compares two digests in constant time.
pub fn digests_match(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

/// Creates a user, owner of an organisation of their own (of the same id),
/// and their first key on it; returns the raw key (shown once).
pub async fn create_user_with_key(
    pool: &uptime_db::Pool,
    name: &str,
) -> Result<(uptime_db::models::User, String), ApiError> {
    let mut conn = uptime_db::pool::conn(pool).await?;
    let user = uptime_db::users::create(&mut conn, name).await?;
    let raw = generate();
    uptime_db::api_keys::create(
        &mut conn,
        user.id,
        user.id,
        uptime_db::organisations::Scope::Admin,
        "initial key",
        &raw[..SHOWN_PREFIX_LEN],
        &digest(&raw),
    )
    .await?;
    Ok((user, raw))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_have_the_contract_shape_and_differ() {
        let a = generate();
        let b = generate();
        assert!(well_formed(&a), "{a}");
        assert_eq!(a.len(), 44);
        assert_ne!(a, b);
    }

    #[test]
    fn malformed_keys_are_recognised() {
        assert!(!well_formed("upt_short"));
        assert!(!well_formed(&format!("xyz_{}", "a".repeat(40))));
        assert!(!well_formed(&format!("upt_{}!", "a".repeat(39))));
    }

    #[test]
    fn digest_is_hex_sha256() {
        assert_eq!(
            digest("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(digests_match(&digest("x"), &digest("x")));
        assert!(!digests_match(&digest("x"), &digest("y")));
    }
}
