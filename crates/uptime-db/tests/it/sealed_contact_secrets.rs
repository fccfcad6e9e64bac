//! Key rotation re-seals alert contacts' provider credentials: after a
//! start with k2 current every credential sealed with k1 is sealed with k2
//! (and opens to the same value); one no configured key opens is counted
//! and left alone; a second run has nothing to do.

use uptime_db::contacts_sealing::reseal_contact_secrets;
use uptime_db::models::NewAlertContact;
use uptime_secrets::{Keyring, Purpose, Zeroizing};
use uptime_testkit::TestDb;

const PURPOSE: Purpose = Purpose::ALERT_CONTACT_SECRET;

fn keyring(current: &str, ids: &[(&str, u8)]) -> Keyring {
    Keyring::new(
        current,
        ids.iter().map(|(id, b)| (*id, Zeroizing::new([*b; 32]))),
    )
    .unwrap()
}

#[tokio::test]
async fn rotation_reseals_contact_credentials_with_the_current_key() {
    let db = TestDb::create().await;
    let mut conn = uptime_db::pool::conn(&db.pool).await.unwrap();
    let org = uptime_db::users::create(&mut conn, "ops").await.unwrap().id;
    let k1 = keyring("k1", &[("k1", 1)]);
    let lost = keyring("k9", &[("k9", 9)]).seal(PURPOSE, "lost").unwrap();
    let mut sealed = vec![];
    for i in 0..5 {
        sealed.push(k1.seal(PURPOSE, &format!("routing-key-{i}")).unwrap());
    }
    sealed.push(lost.clone());
    let mut ids = vec![];
    for (i, secret) in sealed.into_iter().enumerate() {
        let contact = uptime_db::contacts::create(
            &mut conn,
            &NewAlertContact {
                org_id: org,
                kind: "pagerduty".into(),
                name: format!("pd {i}"),
                value: String::new(),
                verified: true,
                verification_token_sha256: None,
                signing_secret: None,
                secret_sealed: Some(secret),
                options: serde_json::json!({}),
                event_kinds: None,
                min_severity: 0,
            },
        )
        .await
        .unwrap();
        ids.push(contact.id);
    }
    let k2 = keyring("k2", &[("k1", 1), ("k2", 2)]);
    let report = reseal_contact_secrets(&db.pool, &k2, 2).await.unwrap();
    assert_eq!((report.resealed, report.unopenable), (5, 1));
    let only_k2 = keyring("k2", &[("k2", 2)]);
    for (i, id) in ids.iter().enumerate() {
        let stored = uptime_db::contacts::get(&mut conn, org, *id)
            .await
            .unwrap()
            .unwrap()
            .secret_sealed
            .unwrap();
        if i == 5 {
            assert_eq!(stored, lost, "left alone");
            continue;
        }
        assert!(stored.starts_with("v1.k2."), "{stored}");
        assert_eq!(
            only_k2.open(PURPOSE, &stored).unwrap().as_str(),
            format!("routing-key-{i}")
        );
    }
    let again = reseal_contact_secrets(&db.pool, &k2, 2).await.unwrap();
    assert_eq!((again.resealed, again.unopenable), (0, 1));
}
