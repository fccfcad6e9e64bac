//! NATS credentials (`UPTIME_NATS__CREDENTIALS_FILE`): a file that cannot be
//! read stops the connect at once with the file's error, instead of a
//! service that starts and then fails every publish unauthenticated.

use async_nats::ConnectErrorKind;
use uptime_contracts::bus;
use uptime_testkit::TestNats;

#[tokio::test]
async fn an_unreadable_credentials_file_fails_the_connect_at_once() {
    let nats = TestNats::start().await;
    let mut settings = nats.settings();
    // Under a directory that does not exist, so no test run can create it.
    settings.credentials_file = Some(
        std::env::temp_dir()
            .join(format!("uptime-no-such-dir-{}", std::process::id()))
            .join("missing.creds"),
    );

    let error = bus::connect(&settings, "credentials-test")
        .await
        .expect_err("a missing credentials file must not connect");
    assert_eq!(error.kind(), ConnectErrorKind::Io, "{error}");

    // The same settings without the file connect: the server was fine.
    settings.credentials_file = None;
    bus::connect(&settings, "credentials-test")
        .await
        .expect("connect without credentials");
}
