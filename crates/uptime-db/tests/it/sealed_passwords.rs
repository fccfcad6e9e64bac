//! Issue 19: basic-auth passwords are stored sealed only. The start-up job
//! seals legacy plain-text passwords (clearing the plain text) and re-seals
//! values of a key that is no longer current; a legacy row gives no check
//! until then; a rewritten row keeps no plain text.

use diesel::sql_types::{BigInt, Nullable, Text};
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uptime_contracts::{BasicAuth, CheckOptions, HttpRequest, MonitorKind};
use uptime_db::models::{MonitorDefinition, NewMonitor, SealedText};
use uptime_db::monitors::{self, sealing, DefinitionChange, SpecError};
use uptime_secrets::{Keyring, Purpose, Zeroizing};
use uptime_testkit::TestDb;

const PURPOSE: Purpose = Purpose::HTTP_BASIC_AUTH_PASSWORD;

fn keyring(current: &str, ids: &[(&str, u8)]) -> Keyring {
    Keyring::new(
        current,
        ids.iter().map(|(id, b)| (*id, Zeroizing::new([*b; 32]))),
    )
    .unwrap()
}

fn with_basic_auth(sealed: Option<SealedText>) -> MonitorDefinition {
    let options = CheckOptions {
        http: Some(HttpRequest {
            basic_auth: Some(BasicAuth {
                username: "probe".into(),
                password_sealed: None,
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    MonitorDefinition {
        check_options: monitors::options_column(&options),
        http_password_sealed: sealed,
        ..uptime_testkit::fixtures::monitor_definition(MonitorKind::Http)
    }
}

#[derive(QueryableByName)]
struct Columns {
    #[diesel(sql_type = Nullable<Text>)]
    http_password: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    http_password_sealed: Option<String>,
}

async fn columns(conn: &mut AsyncPgConnection, id: i64) -> Columns {
    diesel::sql_query("SELECT http_password, http_password_sealed FROM monitors WHERE id = $1")
        .bind::<BigInt, _>(id)
        .get_result(conn)
        .await
        .unwrap()
}

/// A row as a gateway from before issue 19 wrote it.
async fn legacy(conn: &mut AsyncPgConnection, user: i64, password: &str) -> i64 {
    let new = NewMonitor {
        org_id: user,
        definition: with_basic_auth(None),
    };
    let id = monitors::create(conn, new).await.unwrap().id;
    diesel::sql_query("UPDATE monitors SET http_password = $2 WHERE id = $1")
        .bind::<BigInt, _>(id)
        .bind::<Text, _>(password)
        .execute(conn)
        .await
        .unwrap();
    id
}

async fn sealed_row(conn: &mut AsyncPgConnection, user: i64, sealed: String) -> i64 {
    let new = NewMonitor {
        org_id: user,
        definition: with_basic_auth(Some(SealedText::new(sealed))),
    };
    monitors::create(conn, new).await.unwrap().id
}

#[tokio::test]
async fn legacy_passwords_are_sealed_in_batches_and_old_keys_resealed() {
    let db = TestDb::create().await;
    let mut conn = uptime_db::pool::conn(&db.pool).await.unwrap();
    let user = uptime_db::users::create(&mut conn, "sealing")
        .await
        .unwrap()
        .id;
    let k1 = keyring("k1", &[("k1", 1)]);
    let plain: Vec<i64> = legacy_rows(&mut conn, user, 5).await;
    let empty = legacy(&mut conn, user, "").await;

    // Until the job ran, a legacy row gives no check: neither one without
    // its password nor one carrying it in plain text.
    let row = monitors::get(&mut conn, user, plain[0])
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        monitors::check_spec_sealed(&row),
        Err(SpecError::PasswordNotSealed { id: plain[0] })
    );

    // Batches of two: three batches for five rows, plus the empty one.
    let report = sealing::seal_passwords(&db.pool, &k1, 2).await.unwrap();
    assert_eq!(report.sealed_plaintext, 6);
    assert_eq!((report.resealed, report.unopenable), (0, 0));
    for (i, id) in plain.iter().enumerate() {
        let stored = columns(&mut conn, *id).await;
        assert_eq!(stored.http_password, None, "plain text cleared");
        let sealed = stored.http_password_sealed.unwrap();
        assert!(sealed.starts_with("v1.k1."), "{sealed}");
        assert_eq!(
            k1.open(PURPOSE, &sealed).unwrap().as_str(),
            format!("pw-{i}")
        );
    }
    let stored = columns(&mut conn, empty).await;
    assert_eq!(
        (stored.http_password, stored.http_password_sealed),
        (None, None)
    );
    let row = monitors::get(&mut conn, user, plain[0])
        .await
        .unwrap()
        .unwrap();
    let spec = monitors::check_spec_sealed(&row).unwrap();
    assert!(spec.password_sealed().unwrap().starts_with("v1.k1."));
    assert!(
        !format!("{row:?}").contains("v1.k1"),
        "Debug shows no ciphertext"
    );

    // Nothing left to do: a second start changes nothing.
    let again = sealing::seal_passwords(&db.pool, &k1, 2).await.unwrap();
    assert_eq!(again, sealing::SealingReport::default());

    // Rotation: k2 becomes current; every k1 value is sealed again with k2
    // (and still opens to the same password); one sealed with a key that
    // is configured nowhere is counted and left alone.
    let lost = keyring("k9", &[("k9", 9)]).seal(PURPOSE, "lost").unwrap();
    let unknown = sealed_row(&mut conn, user, lost.clone()).await;
    let k2 = keyring("k2", &[("k1", 1), ("k2", 2)]);
    let rotated = sealing::seal_passwords(&db.pool, &k2, 2).await.unwrap();
    assert_eq!(rotated.sealed_plaintext, 0);
    assert_eq!((rotated.resealed, rotated.unopenable), (5, 1));
    let only_k2 = keyring("k2", &[("k2", 2)]);
    for (i, id) in plain.iter().enumerate() {
        let sealed = columns(&mut conn, *id).await.http_password_sealed.unwrap();
        assert!(sealed.starts_with("v1.k2."), "{sealed}");
        assert_eq!(
            only_k2.open(PURPOSE, &sealed).unwrap().as_str(),
            format!("pw-{i}")
        );
    }
    assert_eq!(
        columns(&mut conn, unknown).await.http_password_sealed,
        Some(lost)
    );
}

/// `n` legacy rows with passwords `pw-0`, `pw-1`, ...
async fn legacy_rows(conn: &mut AsyncPgConnection, user: i64, n: usize) -> Vec<i64> {
    let mut ids = Vec::with_capacity(n);
    for i in 0..n {
        ids.push(legacy(conn, user, &format!("pw-{i}")).await);
    }
    ids
}

#[tokio::test]
async fn rewriting_a_definition_leaves_no_plain_text_behind() {
    let db = TestDb::create().await;
    let mut conn = uptime_db::pool::conn(&db.pool).await.unwrap();
    let user = uptime_db::users::create(&mut conn, "rewrite")
        .await
        .unwrap()
        .id;
    let id = legacy(&mut conn, user, "hunter2").await;
    let k1 = keyring("k1", &[("k1", 1)]);
    let sealed = k1.seal(PURPOSE, "new password").unwrap();
    monitors::update_definition(
        &mut conn,
        id,
        with_basic_auth(Some(SealedText::new(sealed.clone()))),
        DefinitionChange::default(),
    )
    .await
    .unwrap();
    let stored = columns(&mut conn, id).await;
    assert_eq!(stored.http_password, None);
    assert_eq!(stored.http_password_sealed, Some(sealed));
}
