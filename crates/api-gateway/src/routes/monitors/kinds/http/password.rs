//! The basic-auth password: write-only, sealed before it is stored, kept
//! across a PATCH that does not restate it, and never following a monitor
//! to another origin unless the request says so.

use uptime_db::models::SealedText;

/// Basic authentication being validated: the password given in this
/// request, or else the stored one (sealed), which is kept.
#[derive(Clone)]
pub(crate) struct BasicAuthDraft {
    pub(crate) username: String,
    /// Given in this request (`""` removes the stored one).
    pub(crate) password: Option<String>,
    /// The stored password, kept when none is given.
    pub(crate) kept: Option<SealedText>,
}

impl BasicAuthDraft {
    /// Whether the stored password would go on being sent: none was given
    /// in this request and one is stored.
    pub(crate) fn keeps_stored_password(&self) -> bool {
        self.password.is_none() && self.kept.is_some()
    }

    /// A password given equal to the `stored` one keeps the stored seal, so
    /// restating it (a PATCH, a PUT by ref, an apply) changes nothing: a
    /// new seal of the same password would differ. Every write that takes
    /// a password goes through this.
    pub(crate) fn keep_if_restated(
        &mut self,
        stored: Option<&SealedText>,
        keyring: Option<&uptime_secrets::Keyring>,
    ) {
        let (Some(given), Some(sealed)) = (&self.password, stored) else {
            return;
        };
        if keyring.is_some_and(|k| {
            k.holds(
                uptime_secrets::Purpose::HTTP_BASIC_AUTH_PASSWORD,
                sealed.as_str(),
                given,
            )
        }) {
            self.password = None;
            self.kept = Some(sealed.clone());
        }
    }
}

impl std::fmt::Debug for BasicAuthDraft {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BasicAuthDraft")
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "[redacted]"))
            .field("kept", &self.kept)
            .finish()
    }
}

/// The password a definition stores, after validation.
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum PasswordToStore {
    None,
    /// The stored one, sealed as it is.
    Keep(SealedText),
    /// A new one, to be sealed before it is stored.
    Seal(String),
}

impl std::fmt::Debug for PasswordToStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PasswordToStore::None => "None",
            PasswordToStore::Keep(_) => "Keep([sealed])",
            PasswordToStore::Seal(_) => "Seal([redacted])",
        })
    }
}

impl PasswordToStore {
    /// The column value: a new password sealed with `keyring`'s current key
    /// (400 naming `basic_auth.password` when this deployment has no key).
    pub(crate) fn into_sealed(
        self,
        keyring: Option<&uptime_secrets::Keyring>,
    ) -> Result<Option<SealedText>, crate::error::ApiError> {
        match self {
            PasswordToStore::None => Ok(None),
            PasswordToStore::Keep(sealed) => Ok(Some(sealed)),
            PasswordToStore::Seal(plain) => {
                let plain = uptime_secrets::Zeroizing::new(plain);
                let keyring = keyring.ok_or_else(|| {
                    crate::error::ApiError::invalid_field(
                        "basic_auth.password",
                        "cannot be stored: this deployment has no secrets key configured \
                         (secrets.keys); leave the password out or ask its operator",
                    )
                })?;
                keyring
                    .seal(uptime_secrets::Purpose::HTTP_BASIC_AUTH_PASSWORD, &plain)
                    .map(|sealed| Some(SealedText::new(sealed)))
                    .map_err(|e| {
                        crate::error::ApiError::Internal(format!("sealing a password: {e}"))
                    })
            }
        }
    }
}

/// Whether the origin (scheme, host, port) of `new` differs from that of
/// `old`: a stored password must not follow a monitor to another origin
/// unless the request says so. Targets that are not URLs (another kind's)
/// count as another origin.
pub(crate) fn origin_changed(old: Option<&str>, new: Option<&str>) -> bool {
    let origin = |target: Option<&str>| {
        target
            .and_then(|t| url::Url::parse(t.trim()).ok())
            .map(|u| u.origin())
            .filter(url::Origin::is_tuple)
    };
    match (origin(old), origin(new)) {
        (Some(old), Some(new)) => old != new,
        _ => old.map(str::trim) != new.map(str::trim),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_differ_by_scheme_host_or_port_only() {
        let changed = |a: &str, b: &str| origin_changed(Some(a), Some(b));
        assert!(!changed(
            "https://example.com/a",
            "https://example.com/b?q=1"
        ));
        assert!(!changed("https://example.com/", "https://EXAMPLE.com:443/"));
        assert!(!changed("http://example.com", "http://example.com:80/x"));
        assert!(changed("https://example.com/", "http://example.com/"));
        assert!(changed("https://example.com/", "https://evil.example/"));
        assert!(changed("https://example.com/", "https://example.com:8443/"));
        assert!(changed("https://example.com/", "example.com:443"));
        assert!(!origin_changed(None, None));
    }
}
