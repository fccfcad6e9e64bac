//! Signed acknowledge links: the notifier puts one in each down alert, so a
//! person can acknowledge the incident from a phone without an API key; the
//! api-gateway checks it. The token names the incident, the contact the
//! alert went to (who acknowledged) and when it expires, signed with
//! HMAC-SHA256 under the deployment's `ack_links.secret`:
//! `base64url(incident ‖ contact ‖ expires) "." base64url(mac)`.
//!
//! The link is `GET /api/v1/incidents/ack/{token}`, which only shows a page
//! with a button; the button POSTs to the same address and that
//! acknowledges. A GET that acknowledged would be followed by mail
//! scanners and link previews, acknowledging every incident unseen.

use base64::engine::general_purpose::{STANDARD, URL_SAFE, URL_SAFE_NO_PAD};
use base64::Engine;
use chrono::{DateTime, TimeZone, Utc};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use uptime_config::{AckLinkSettings, MAX_ACK_LINK_TTL_SECS};
use uuid::Uuid;

/// The shortest key accepted.
const MIN_KEY_BYTES: usize = 32;
/// What the MAC covers besides the claims: a signature for another purpose
/// under the same key can never pass for this one.
const PURPOSE: &[u8] = b"uptime-incident-ack-v1.";
const CLAIM_BYTES: usize = 16 + 8 + 8;

/// What a valid link says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckClaim {
    pub incident_id: Uuid,
    /// The alert contact the link was sent to.
    pub contact_id: i64,
    pub expires_at: DateTime<Utc>,
}

/// Why a link is refused. Deliberately coarse: the page says the link is
/// not (or no longer) valid, nothing about which part failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AckLinkError {
    #[error("the acknowledge link is malformed or its signature does not match")]
    Invalid,
    #[error("the acknowledge link has expired")]
    Expired,
}

/// The secret is unusable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("ack_links.secret must be base64 of at least {MIN_KEY_BYTES} bytes")]
pub struct InvalidAckSecret;

/// Signs and checks links with one key.
#[derive(Clone)]
pub struct AckLinks {
    key: Vec<u8>,
    ttl: chrono::Duration,
    base_url: String,
}

impl std::fmt::Debug for AckLinks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AckLinks")
            .field("key", &"[redacted]")
            .field("ttl", &self.ttl)
            .field("base_url", &self.base_url)
            .finish()
    }
}

impl AckLinks {
    /// `None` when no secret is configured (alerts then carry no link).
    pub fn from_settings(settings: &AckLinkSettings) -> Result<Option<Self>, InvalidAckSecret> {
        let secret = settings.secret.trim();
        if secret.is_empty() {
            return Ok(None);
        }
        let key = [&STANDARD, &URL_SAFE, &URL_SAFE_NO_PAD]
            .iter()
            .find_map(|engine| engine.decode(secret).ok())
            .or_else(|| {
                base64::engine::general_purpose::STANDARD_NO_PAD
                    .decode(secret)
                    .ok()
            })
            .ok_or(InvalidAckSecret)?;
        if key.len() < MIN_KEY_BYTES {
            return Err(InvalidAckSecret);
        }
        let ttl_secs = settings.ttl_secs.clamp(60, MAX_ACK_LINK_TTL_SECS);
        Ok(Some(Self {
            key,
            ttl: chrono::Duration::seconds(ttl_secs as i64),
            base_url: settings.public_base_url.trim_end_matches('/').to_string(),
        }))
    }

    fn mac(&self, claims: &str) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes any key");
        mac.update(PURPOSE);
        mac.update(claims.as_bytes());
        mac
    }

    /// A token for `incident_id` sent to `contact_id` at `now`.
    pub fn token(&self, incident_id: Uuid, contact_id: i64, now: DateTime<Utc>) -> String {
        let expires = (now + self.ttl).timestamp();
        let mut claims = Vec::with_capacity(CLAIM_BYTES);
        claims.extend_from_slice(incident_id.as_bytes());
        claims.extend_from_slice(&contact_id.to_be_bytes());
        claims.extend_from_slice(&expires.to_be_bytes());
        let claims = URL_SAFE_NO_PAD.encode(claims);
        let signature = URL_SAFE_NO_PAD.encode(self.mac(&claims).finalize().into_bytes());
        format!("{claims}.{signature}")
    }

    /// The link of [`Self::token`].
    pub fn url(&self, incident_id: Uuid, contact_id: i64, now: DateTime<Utc>) -> String {
        format!(
            "{}/api/v1/incidents/ack/{}",
            self.base_url,
            self.token(incident_id, contact_id, now)
        )
    }

    /// What `token` says, if it is ours and unexpired at `now`.
    pub fn verify(&self, token: &str, now: DateTime<Utc>) -> Result<AckClaim, AckLinkError> {
        let (claims, signature) = token.split_once('.').ok_or(AckLinkError::Invalid)?;
        let signature = URL_SAFE_NO_PAD
            .decode(signature)
            .map_err(|_| AckLinkError::Invalid)?;
        // Constant-time comparison.
        self.mac(claims)
            .verify_slice(&signature)
            .map_err(|_| AckLinkError::Invalid)?;
        let bytes = URL_SAFE_NO_PAD
            .decode(claims)
            .map_err(|_| AckLinkError::Invalid)?;
        if bytes.len() != CLAIM_BYTES {
            return Err(AckLinkError::Invalid);
        }
        let incident_id = Uuid::from_slice(&bytes[..16]).map_err(|_| AckLinkError::Invalid)?;
        let contact_id = i64::from_be_bytes(bytes[16..24].try_into().expect("8 bytes"));
        let expires = i64::from_be_bytes(bytes[24..32].try_into().expect("8 bytes"));
        let expires_at = Utc
            .timestamp_opt(expires, 0)
            .single()
            .ok_or(AckLinkError::Invalid)?;
        if expires_at <= now {
            return Err(AckLinkError::Expired);
        }
        Ok(AckClaim {
            incident_id,
            contact_id,
            expires_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn links(secret: &str) -> AckLinks {
        AckLinks::from_settings(&AckLinkSettings {
            secret: secret.into(),
            ttl_secs: 3600,
            public_base_url: "https://uptime.example/".into(),
        })
        .unwrap()
        .unwrap()
    }

    const SECRET: &str = "q0pWR1NVhLJkpbXvIpUO3i0c5WzQg3iyXH2i7Lq1P1c=";

    #[test]
    fn a_link_verifies_until_it_expires() {
        let links = links(SECRET);
        let now = Utc.timestamp_opt(1_800_000_000, 0).unwrap();
        let incident = Uuid::new_v4();
        let token = links.token(incident, 42, now);
        let claim = links.verify(&token, now).unwrap();
        assert_eq!((claim.incident_id, claim.contact_id), (incident, 42));
        assert_eq!(claim.expires_at, now + chrono::Duration::hours(1));
        assert_eq!(
            links.verify(&token, now + chrono::Duration::hours(1)),
            Err(AckLinkError::Expired)
        );
        assert!(links
            .url(incident, 42, now)
            .starts_with("https://uptime.example/api/v1/incidents/ack/"));
    }

    #[test]
    fn a_changed_or_foreign_token_is_refused() {
        let now = Utc::now();
        let ours = links(SECRET);
        let token = ours.token(Uuid::new_v4(), 42, now);
        let other = links("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=");
        assert_eq!(other.verify(&token, now), Err(AckLinkError::Invalid));
        // Another contact id under the same signature.
        let (claims, sig) = token.split_once('.').unwrap();
        let mut bytes = URL_SAFE_NO_PAD.decode(claims).unwrap();
        bytes[23] ^= 1;
        let forged = format!("{}.{sig}", URL_SAFE_NO_PAD.encode(bytes));
        assert_eq!(ours.verify(&forged, now), Err(AckLinkError::Invalid));
        for junk in ["", ".", "abc", "abc.def", &format!("{token}x")] {
            assert_eq!(ours.verify(junk, now), Err(AckLinkError::Invalid), "{junk}");
        }
    }

    #[test]
    fn no_secret_means_no_links_and_a_short_one_is_refused() {
        assert!(AckLinks::from_settings(&AckLinkSettings::default())
            .unwrap()
            .is_none());
        let short = AckLinkSettings {
            secret: "c2hvcnQ=".into(),
            ..AckLinkSettings::default()
        };
        assert_eq!(
            AckLinks::from_settings(&short).unwrap_err(),
            InvalidAckSecret
        );
        assert!(!format!("{:?}", links(SECRET)).contains(SECRET));
    }
}
