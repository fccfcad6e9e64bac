//! Standard Webhooks signatures (<https://www.standardwebhooks.com>):
//! `webhook-signature: v1,<base64 HMAC-SHA256(key, "{id}.{timestamp}.{body}")>`
//! where the key is the base64 part of the contact's `whsec_...` secret.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The prefix of every signing secret.
pub const SECRET_PREFIX: &str = "whsec_";

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("the signing secret is not `whsec_` followed by base64")]
pub struct InvalidSecret;

/// The key bytes of a `whsec_<base64>` secret.
pub fn secret_key(secret: &str) -> Result<Vec<u8>, InvalidSecret> {
    let encoded = secret.strip_prefix(SECRET_PREFIX).ok_or(InvalidSecret)?;
    let key = STANDARD.decode(encoded).map_err(|_| InvalidSecret)?;
    if key.is_empty() {
        return Err(InvalidSecret);
    }
    Ok(key)
}

/// The `webhook-signature` header value for one request.
pub fn sign(
    secret: &str,
    msg_id: &str,
    timestamp: i64,
    body: &[u8],
) -> Result<String, InvalidSecret> {
    let key = secret_key(secret)?;
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).map_err(|_| InvalidSecret)?;
    mac.update(msg_id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    Ok(format!(
        "v1,{}",
        STANDARD.encode(mac.finalize().into_bytes())
    ))
}

/// A new random secret: `whsec_` + base64 of 32 random bytes.
pub fn new_secret() -> String {
    let key: [u8; 32] = rand::random();
    format!("{SECRET_PREFIX}{}", STANDARD.encode(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of the Standard Webhooks specification.
    #[test]
    fn matches_the_specification_example() {
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let body = br#"{"test": 2432232314}"#;
        let sig = sign(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body).unwrap();
        assert_eq!(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn refuses_secrets_without_prefix_or_base64() {
        assert_eq!(
            secret_key("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"),
            Err(InvalidSecret)
        );
        assert_eq!(secret_key("whsec_***"), Err(InvalidSecret));
        assert!(secret_key(&new_secret()).unwrap().len() == 32);
    }
}
