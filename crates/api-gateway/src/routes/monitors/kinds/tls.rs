//! tls monitors: a TLS handshake with a valid, unexpired certificate for
//! the name, optionally pinned by its fingerprint. Their field
//! `tls_fingerprint_sha256`, its rule and stored form
//! (`CheckOptions::tls`).

use super::stored::{merged, Stored};
use crate::routes::monitors::monitor_type::MonitorType;
use crate::validation::Problems;
use serde::{Deserialize, Serialize};
use uptime_contracts::{CheckOptions, TlsOptions};
use utoipa::ToSchema;

crate::routes::monitors::fields::api_fields! {
    /// The fields of a create request.
    #[derive(Debug, Default, Deserialize, ToSchema)]
    pub struct Create;
    /// The fields of a PATCH.
    #[derive(Debug, Default, Deserialize, ToSchema)]
    pub struct Update;
    /// The fields of a response (`null` on other kinds).
    #[derive(Debug, Default, Serialize, ToSchema)]
    pub struct Shown;

    /// tls monitors: the SHA-256 fingerprint of the leaf certificate (64 hex
    /// digits, or 32 colon-separated pairs; any case), stored as 64
    /// lowercase hex digits. Any other certificate fails the check.
    tls_fingerprint_sha256: opt String
        [pattern = "^(?:[0-9A-Fa-f]{64}|[0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{2}){31})$"],
        clear /// `null` unpins the certificate.
        => /// tls monitors: the pinned certificate's SHA-256, 64 lowercase hex digits.
        Option<String>;
}

/// The pin being validated.
#[derive(Debug, Clone, Default)]
pub(crate) struct Draft {
    pub(crate) tls_fingerprint_sha256: Option<String>,
}

impl Draft {
    pub(crate) fn from_create(given: Create) -> Self {
        Self {
            tls_fingerprint_sha256: given.tls_fingerprint_sha256,
        }
    }

    /// The stored pin with `patch` applied, for a monitor of `kind`.
    pub(crate) fn merge(kind: MonitorType, stored: &Stored<'_>, patch: Update) -> Self {
        Self {
            tls_fingerprint_sha256: merged(
                patch.tls_fingerprint_sha256,
                stored
                    .options
                    .tls
                    .clone()
                    .and_then(|t| t.fingerprint_sha256),
                kind == MonitorType::Tls,
            ),
        }
    }

    /// Refuses the pin given for a monitor of another kind.
    pub(crate) fn refuse_on_other_kinds(&self, kind: MonitorType, problems: &mut Problems) {
        if self.tls_fingerprint_sha256.is_some() && kind != MonitorType::Tls {
            problems.add("tls_fingerprint_sha256", "is only for tls monitors");
        }
    }

    /// Checks the pin's rule.
    pub(crate) fn validate(&self, problems: &mut Problems) {
        if let Some(fingerprint) = &self.tls_fingerprint_sha256 {
            if normal_fingerprint(fingerprint).is_none() {
                problems.add(
                    "tls_fingerprint_sha256",
                    "must be a SHA-256 fingerprint: 64 hex digits, or 32 colon-separated pairs",
                );
            }
        }
    }

    /// Adds the pin to `options` as stored (64 lowercase hex digits). Only
    /// for tls monitors, after [`Self::validate`] found nothing.
    pub(crate) fn store(self, options: &mut CheckOptions) {
        options.tls = self
            .tls_fingerprint_sha256
            .as_deref()
            .and_then(normal_fingerprint)
            .map(|f| TlsOptions {
                fingerprint_sha256: Some(f),
            });
    }
}

/// What a response shows of a stored tls monitor.
pub(crate) fn shown(stored: &Stored<'_>) -> Shown {
    Shown {
        tls_fingerprint_sha256: stored
            .options
            .tls
            .clone()
            .and_then(|t| t.fingerprint_sha256),
    }
}

/// The target: `host:port` or an `https://` URL.
pub(crate) fn check_target(problems: &mut Problems, target: &str, allow_private: bool) {
    problems.check_tls_target("target", target, allow_private);
}

/// 64 lowercase hex digits from 64 hex digits of any case, or from 32
/// colon-separated pairs; `None` for anything else.
fn normal_fingerprint(given: &str) -> Option<String> {
    let hex: String = if given.contains(':') {
        let pairs: Vec<&str> = given.split(':').collect();
        if pairs.len() != 32 || pairs.iter().any(|p| p.len() != 2) {
            return None;
        }
        pairs.concat()
    } else {
        given.to_string()
    };
    (hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| hex.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_are_normalised_to_lowercase_hex() {
        let hex = "AB".repeat(32);
        let pairs = vec!["ab"; 32].join(":");
        let expected = Some("ab".repeat(32));
        assert_eq!(normal_fingerprint(&hex), expected);
        assert_eq!(normal_fingerprint(&pairs.to_uppercase()), expected);
        for bad in [
            "ab".repeat(31),
            "ab".repeat(33),
            "zz".repeat(32),
            format!("{}:", "ab".repeat(32)),
            vec!["abc"; 32].join(":"),
            vec!["a"; 64].join(":"),
        ] {
            assert_eq!(normal_fingerprint(&bad), None, "{bad}");
        }
    }
}
