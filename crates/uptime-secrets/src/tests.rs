use super::*;

fn key(byte: u8) -> Zeroizing<[u8; KEY_BYTES]> {
    Zeroizing::new([byte; KEY_BYTES])
}

fn ring(current: &str, ids: &[(&str, u8)]) -> Keyring {
    Keyring::new(current, ids.iter().map(|(id, b)| (*id, key(*b)))).unwrap()
}

const PURPOSE: Purpose = Purpose::HTTP_BASIC_AUTH_PASSWORD;

#[test]
fn a_sealed_value_opens_to_its_plaintext_and_names_its_key() {
    let ring = ring("k1", &[("k1", 1)]);
    let sealed = ring.seal(PURPOSE, "hunter2").unwrap();
    assert!(sealed.starts_with("v1.k1."), "{sealed}");
    assert!(!sealed.contains("hunter2"));
    assert_eq!(key_id_of(&sealed), Some("k1"));
    assert!(ring.is_current(&sealed));
    assert_eq!(ring.open(PURPOSE, &sealed).unwrap().as_str(), "hunter2");
    // A fresh nonce each time: the same plaintext seals differently.
    assert_ne!(sealed, ring.seal(PURPOSE, "hunter2").unwrap());
    // Empty and non-ASCII plaintexts too.
    for plain in ["", "pässwörd ✓"] {
        let sealed = ring.seal(PURPOSE, plain).unwrap();
        assert_eq!(ring.open(PURPOSE, &sealed).unwrap().as_str(), plain);
    }
}

#[test]
fn a_value_sealed_with_a_key_not_configured_does_not_open() {
    let sealed = ring("k9", &[("k9", 9)]).seal(PURPOSE, "hunter2").unwrap();
    let other = ring("k1", &[("k1", 1)]);
    let err = other.open(PURPOSE, &sealed).unwrap_err();
    assert_eq!(err, SecretError::UnknownKey("k9".into()));
    assert!(!err.to_string().contains("hunter2"));
    // Another key under the same id: refused by the tag, not garbage.
    let same_id = ring("k9", &[("k9", 8)]);
    assert_eq!(
        same_id.open(PURPOSE, &sealed).unwrap_err(),
        SecretError::DoesNotOpen("k9".into())
    );
}

#[test]
fn an_altered_value_does_not_open() {
    let ring = ring("k1", &[("k1", 1), ("k2", 2)]);
    let sealed = ring.seal(PURPOSE, "hunter2").unwrap();
    let body = sealed.strip_prefix("v1.k1.").unwrap();
    let mut bytes = URL_SAFE_NO_PAD.decode(body).unwrap();
    for at in [0, NONCE_BYTES, bytes.len() - 1] {
        bytes[at] ^= 0x01;
        let altered = format!("v1.k1.{}", URL_SAFE_NO_PAD.encode(&bytes));
        assert_eq!(
            ring.open(PURPOSE, &altered).unwrap_err(),
            SecretError::DoesNotOpen("k1".into()),
            "byte {at}"
        );
        bytes[at] ^= 0x01;
    }
    // The key id is bound too: the same body under another id fails.
    let moved = format!("v1.k2.{body}");
    assert_eq!(
        ring.open(PURPOSE, &moved).unwrap_err(),
        SecretError::DoesNotOpen("k2".into())
    );
    // And so is the purpose.
    let elsewhere = Purpose("alert_contacts.signing_secret");
    assert_eq!(
        ring.open(elsewhere, &sealed).unwrap_err(),
        SecretError::DoesNotOpen("k1".into())
    );
    for malformed in [
        "",
        "hunter2",
        "v2.k1.AAAA",
        "v1.K1.AAAA",
        "v1.k1.",
        "v1.k1.not base64!",
        "v1.k1.AAAAAAAA",
    ] {
        assert_eq!(
            ring.open(PURPOSE, malformed).unwrap_err(),
            SecretError::Malformed,
            "{malformed:?}"
        );
    }
}

#[test]
fn after_rotation_old_values_open_and_new_ones_use_the_new_key() {
    let before = ring("k1", &[("k1", 1)]);
    let old = before.seal(PURPOSE, "hunter2").unwrap();
    let after = ring("k2", &[("k1", 1), ("k2", 2)]);
    assert!(!after.is_current(&old), "re-sealing is due");
    assert_eq!(after.open(PURPOSE, &old).unwrap().as_str(), "hunter2");
    let new = after.seal(PURPOSE, "hunter2").unwrap();
    assert_eq!(key_id_of(&new), Some("k2"));
    assert!(after.is_current(&new));
    // Once k1 is removed, only what k2 sealed opens.
    let done = ring("k2", &[("k2", 2)]);
    assert_eq!(done.open(PURPOSE, &new).unwrap().as_str(), "hunter2");
    assert_eq!(
        done.open(PURPOSE, &old).unwrap_err(),
        SecretError::UnknownKey("k1".into())
    );
}

#[test]
fn settings_build_a_keyring_or_say_what_is_wrong() {
    let settings = |current: &str, keys: &[(&str, &str)]| SecretsSettings {
        current_key_id: current.into(),
        keys: keys
            .iter()
            .map(|(id, k)| (id.to_string(), k.to_string()))
            .collect(),
    };
    assert!(Keyring::from_settings(&SecretsSettings::default())
        .unwrap()
        .is_none());
    let k1 = generate_key();
    let url_safe = URL_SAFE_NO_PAD.encode([7u8; KEY_BYTES]);
    let ring = Keyring::from_settings(&settings(
        "k1",
        &[("k1", &format!("{k1}\n")), ("k2", &url_safe)],
    ))
    .unwrap()
    .unwrap();
    assert_eq!(ring.current_key_id(), "k1");
    let shown = format!("{ring:?}");
    assert!(shown.contains("k2") && !shown.contains(&k1), "{shown}");

    let cases = [
        (settings("", &[("k1", &k1)]), SecretError::NoCurrentKey),
        (
            settings("k3", &[("k1", &k1)]),
            SecretError::UnknownCurrentKey("k3".into()),
        ),
        (
            settings("k1", &[("k1", "c2hvcnQ=")]),
            SecretError::InvalidKey("k1".into()),
        ),
        (
            settings("k1", &[("k1", "not base64 at all")]),
            SecretError::InvalidKey("k1".into()),
        ),
        (
            settings("K.1", &[("K.1", &k1)]),
            SecretError::InvalidKeyId("K.1".into()),
        ),
    ];
    for (settings, expected) in cases {
        let err = Keyring::from_settings(&settings).unwrap_err();
        assert_eq!(err, expected);
        assert!(!err.to_string().contains(&k1), "{err}");
    }
}
