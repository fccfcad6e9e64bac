//! Webhook URLs that are credentials (Slack, Teams, Discord: whoever has the
//! URL can post to the channel) are secrets (issue 35): write-only, sealed
//! at rest, answered redacted to every key, and still delivered to in full.
//! A generic webhook's URL, authenticated by its signature, is answered as
//! given.

use crate::common::{spawn_app, spawn_app_with, TestApp};
use reqwest::StatusCode;
use serde_json::{json, Value};
use uptime_db::organisations::{Role, Scope};
use uptime_testkit::receiver::WebhookReceiver;

const CONTACTS: &str = "/api/v1/alert-contacts";
const SLACK_TOKEN: &str = "xSlAcKt0kEnSeCrEt";
const DISCORD_TOKEN: &str = "dIsCoRdT0kEn-_x";
const TEAMS_SIG: &str = "tEaMsSiGnAtUrE0123";

/// (type, the URL on `receiver`, what a read shows of it).
fn credential_urls(receiver: &WebhookReceiver) -> Vec<(&'static str, String, String)> {
    let base = receiver.url("");
    vec![
        (
            "slack",
            receiver.url(&format!("/services/T0001/B0002/{SLACK_TOKEN}")),
            format!("{base}/services/T0001/B0002/[redacted]"),
        ),
        (
            "discord",
            receiver.url(&format!("/api/webhooks/123456/{DISCORD_TOKEN}")),
            format!("{base}/api/webhooks/123456/[redacted]"),
        ),
        (
            "teams",
            receiver.url(&format!(
                "/workflows/abc/triggers/manual/paths/invoke?api-version=2016-06-01&sv=1.0&sig={TEAMS_SIG}"
            )),
            format!(
                "{base}/workflows/abc/triggers/manual/paths/invoke?api-version=2016-06-01&sv=1.0&sig=[redacted]"
            ),
        ),
    ]
}

/// The stored `value` and `secret_sealed` of contact `id`.
async fn stored(app: &TestApp, id: i64) -> (String, Option<String>) {
    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;
    use uptime_db::schema::alert_contacts;
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    alert_contacts::table
        .filter(alert_contacts::id.eq(id))
        .select((alert_contacts::value, alert_contacts::secret_sealed))
        .first(&mut conn)
        .await
        .unwrap()
}

fn keyring() -> uptime_secrets::Keyring {
    uptime_secrets::Keyring::from_settings(&uptime_testkit::secrets::test_secrets())
        .unwrap()
        .unwrap()
}

fn leaks(answer: &Value) -> bool {
    let text = answer.to_string();
    [SLACK_TOKEN, DISCORD_TOKEN, TEAMS_SIG]
        .iter()
        .any(|secret| text.contains(secret))
}

#[tokio::test]
async fn credential_urls_are_sealed_answered_redacted_and_still_delivered() {
    let receiver = WebhookReceiver::start().await;
    let app = spawn_app().await;
    let (org, key) = app.new_user("acme").await;
    let (viewer, _) = app.new_user("vera").await;
    app.add_member(org, viewer, Role::Viewer).await;
    let viewer_key = app.key_for(org, viewer, Scope::Read).await;
    for (kind, url, shown) in credential_urls(&receiver) {
        let (status, created) = app
            .post(
                CONTACTS,
                &key,
                json!({"name": kind, "type": kind, "value": url, "ref": format!("{kind}-chat")}),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{created}");
        assert_eq!(
            (&created["value"], &created["value_redacted"]),
            (&json!(shown), &json!(true)),
            "{kind}: the creating answer redacts too: {created}"
        );
        let id = created["id"].as_i64().unwrap();
        let path = format!("{CONTACTS}/{id}");
        for reader in [&key, &viewer_key] {
            let (_, read) = app.get(&path, reader).await;
            assert_eq!(read["value"], shown, "{kind}: {read}");
            let (_, list) = app.get(CONTACTS, reader).await;
            assert!(!leaks(&list) && !leaks(&read), "{kind}: {list}");
        }
        let (status, by_ref) = app
            .get(&format!("{CONTACTS}/by-ref/{kind}-chat"), &viewer_key)
            .await;
        assert_eq!((status, &by_ref["value"]), (StatusCode::OK, &json!(shown)));

        // At rest: the column reads show holds the redaction; the URL is
        // sealed with the contacts' credentials.
        let (value, sealed) = stored(&app, id).await;
        assert_eq!(value, shown);
        let opened = keyring()
            .open(
                uptime_secrets::Purpose::ALERT_CONTACT_SECRET,
                &sealed.expect("sealed"),
            )
            .unwrap();
        assert_eq!(opened.as_str(), url);

        // The test alert goes to the whole URL.
        let before = receiver.received().len();
        let (status, sent) = app.post(&format!("{path}/test"), &key, json!({})).await;
        assert_eq!(status, StatusCode::OK, "{kind}: {sent}");
        let got = receiver.received();
        assert_eq!(got.len(), before + 1, "{kind}");
        let sent_to = match &got[before].query {
            Some(query) => format!("{}?{query}", got[before].path),
            None => got[before].path.clone(),
        };
        assert_eq!(receiver.url(&sent_to), url, "{kind}");

        // The redaction sent back keeps the URL (a client that read and
        // writes the whole contact back); another redacted text is refused.
        let (status, patched) = app
            .patch(&path, &key, json!({"value": shown, "name": "renamed"}))
            .await;
        assert_eq!(status, StatusCode::OK, "{kind}: {patched}");
        assert_eq!(stored(&app, id).await.0, shown);
        let (status, refused) = app
            .patch(
                &path,
                &key,
                json!({"value": receiver.url("/services/T9/B9/[redacted]")}),
            )
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{kind}: {refused}");
        assert_eq!(refused["details"][0]["field"], "value");
        // A replacement by ref that does not restate the URL keeps it.
        let (status, replaced) = app
            .call(
                reqwest::Method::PUT,
                &format!("{CONTACTS}/by-ref/{kind}-chat"),
                Some(&key),
                Some(json!({"name": "again", "type": kind})),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{kind}: {replaced}");
        let before = receiver.received().len();
        let (status, _) = app.post(&format!("{path}/test"), &key, json!({})).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(receiver.received().len(), before + 1, "still delivered");

        // A new URL replaces the sealed one; the audit entry says the value
        // changed, without it.
        let new_url = url.replace("123456", "654321").replace("T0001", "T0009");
        let new_url = new_url.replace("/workflows/abc/", "/workflows/xyz/");
        let (status, patched) = app.patch(&path, &key, json!({"value": new_url})).await;
        assert_eq!(status, StatusCode::OK, "{kind}: {patched}");
        let (_, sealed) = stored(&app, id).await;
        let opened = keyring()
            .open(
                uptime_secrets::Purpose::ALERT_CONTACT_SECRET,
                &sealed.unwrap(),
            )
            .unwrap();
        assert_eq!(opened.as_str(), new_url);
        let (_, log) = app.get("/api/v1/audit-log", &key).await;
        assert!(!leaks(&log), "{log}");
    }
}

#[tokio::test]
async fn a_generic_webhook_url_is_an_address_answered_as_given() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("acme").await;
    let url = "https://hooks.example.com/uptime?team=ops";
    let (status, created) = app
        .post(
            CONTACTS,
            &key,
            json!({"name": "hook", "type": "webhook", "value": url}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["value"], url);
    assert!(created.get("value_redacted").is_none(), "{created}");
}

/// Without a secrets key the URL stays in the value column (as before
/// addresses were sealed), answered redacted all the same; the gateway's
/// first start with a key seals it, and deliveries go on.
#[tokio::test]
async fn a_url_stored_in_plain_text_is_sealed_at_the_next_start_with_a_key() {
    let receiver = WebhookReceiver::start().await;
    let keyless = spawn_app_with(|s| s.secrets = Default::default()).await;
    let (_, key) = keyless.new_user("acme").await;
    let (_, url, shown) = credential_urls(&receiver).remove(0);
    let (status, created) = keyless
        .post(
            CONTACTS,
            &key,
            json!({"name": "chat", "type": "slack", "value": url}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["value"], shown);
    let id = created["id"].as_i64().unwrap();
    assert_eq!(stored(&keyless, id).await, (url.clone(), None));

    let keyring = keyring();
    let sealed = uptime_db::contacts_sealing::seal_contact_addresses(
        &keyless.state.pool,
        &keyring,
        &["slack", "teams", "discord"],
        &uptime_alerts::address::redact,
        1,
    )
    .await
    .unwrap();
    assert_eq!(sealed, 1);
    let (value, seal) = stored(&keyless, id).await;
    assert_eq!(value, shown);
    let opened = keyring
        .open(
            uptime_secrets::Purpose::ALERT_CONTACT_SECRET,
            &seal.unwrap(),
        )
        .unwrap();
    assert_eq!(opened.as_str(), url);
    let again = uptime_db::contacts_sealing::seal_contact_addresses(
        &keyless.state.pool,
        &keyring,
        &["slack"],
        &uptime_alerts::address::redact,
        1,
    )
    .await
    .unwrap();
    assert_eq!(again, 0, "nothing twice");
}
