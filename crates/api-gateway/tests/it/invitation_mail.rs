//! Invitation emails through a real SMTP listener: inviting sends one email
//! to the invited address whose token accepts the invitation; a relay that
//! refuses leaves the invitation made and says why (`mail.sent` false),
//! and a resend (a new token; the old one stops working) sends it.

use crate::common::{spawn_app_with, TestApp};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use uptime_testkit::smtp::{ReceivedMail, SmtpServer};

async fn app_sending_to(port: u16) -> TestApp {
    spawn_app_with(move |s| {
        s.smtp.host = "127.0.0.1".into();
        s.smtp.port = port;
        s.smtp.tls = uptime_config::SmtpTls::None;
        s.smtp.from = "Uptime <alerts@uptime.test>".into();
        s.http.public_base_url = "https://uptime.test/".into();
    })
    .await
}

/// The token on the line after "send this token:".
fn token_in(mail: &ReceivedMail) -> String {
    let body = mail.text_body();
    let mut lines = body.lines().skip_while(|l| !l.contains("send this token:"));
    lines
        .nth(1)
        .into_iter()
        .chain(lines)
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_else(|| panic!("no token in {body}"))
        .to_string()
}

async fn accept(app: &TestApp, token: &str) -> (StatusCode, Value) {
    app.call(
        Method::POST,
        "/api/v1/invitations/accept",
        None,
        Some(json!({"token": token, "name": "Nia"})),
    )
    .await
}

#[tokio::test]
async fn inviting_sends_one_email_whose_token_accepts() {
    let smtp = SmtpServer::start().await;
    let app = app_sending_to(smtp.port()).await;
    let (org, key) = app.new_user("acme").await;

    let (status, created) = app
        .post(
            "/api/v1/invitations",
            &key,
            json!({"email": "Nia@Example.com", "role": "editor"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["mail"], json!({"sent": true}), "{created}");

    let mails = smtp.wait_for(1, Duration::from_secs(5)).await;
    assert_eq!(mails.len(), 1);
    assert_eq!(mails[0].rcpt_to, ["nia@example.com"]);
    assert_eq!(
        mails[0].header("subject").unwrap(),
        "Invitation to join \"acme\" on Uptime"
    );
    let body = mails[0].text_body();
    assert!(body.contains("\"acme\" invited you"), "{body}");
    assert!(body.contains("as editor"), "{body}");
    assert!(
        body.contains("https://uptime.test/api/v1/invitations/accept"),
        "{body}"
    );
    let token = token_in(&mails[0]);
    assert_eq!(token, created["token"].as_str().unwrap());

    let (status, joined) = accept(&app, &token).await;
    assert_eq!(status, StatusCode::CREATED, "{joined}");
    assert_eq!(joined["org_id"], org);
    assert_eq!(smtp.received().len(), 1, "exactly one email");
}

/// A relay on `port` that refuses its first connection (`554` greeting)
/// while `refuse` holds, and passes every other one to `smtp`.
async fn refusing_relay(smtp_port: u16, refuse: Arc<AtomicBool>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            if refuse.swap(false, Ordering::SeqCst) {
                let _ = client
                    .write_all(b"554 5.3.2 relay refusing for now\r\n")
                    .await;
                continue;
            }
            tokio::spawn(async move {
                let mut upstream = TcpStream::connect(("127.0.0.1", smtp_port)).await.unwrap();
                let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
            });
        }
    });
    port
}

#[tokio::test]
async fn a_refusing_relay_leaves_the_invitation_and_a_resend_sends_it() {
    let smtp = SmtpServer::start().await;
    let refuse = Arc::new(AtomicBool::new(true));
    let port = refusing_relay(smtp.port(), refuse.clone()).await;
    let app = app_sending_to(port).await;
    let (org, key) = app.new_user("acme").await;

    let (status, created) = app
        .post(
            "/api/v1/invitations",
            &key,
            json!({"email": "nia@example.com", "role": "viewer"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["mail"]["sent"], false, "{created}");
    let error = created["mail"]["error"].as_str().unwrap();
    assert!(
        error.contains("554") || error.contains("refusing"),
        "{error}"
    );
    let id = created["id"].as_i64().unwrap();
    let first_token = created["token"].as_str().unwrap().to_string();

    let (status, resent) = app
        .post(&format!("/api/v1/invitations/{id}/resend"), &key, json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{resent}");
    assert_eq!(resent["mail"], json!({"sent": true}), "{resent}");
    let mails = smtp.wait_for(1, Duration::from_secs(5)).await;
    assert_eq!(mails[0].rcpt_to, ["nia@example.com"]);
    let token = token_in(&mails[0]);
    assert_eq!(token, resent["token"].as_str().unwrap());
    assert_ne!(token, first_token, "a resend issues a new token");

    // A second resend at once is limited like verification resends.
    let (status, limited) = app
        .post(&format!("/api/v1/invitations/{id}/resend"), &key, json!({}))
        .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{limited}");

    // The first token stopped working; the sent one accepts.
    let (status, _) = accept(&app, &first_token).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, joined) = accept(&app, &token).await;
    assert_eq!(status, StatusCode::CREATED, "{joined}");
    assert_eq!(joined["org_id"], org);

    // An accepted invitation is not resent.
    let (status, _) = app
        .post(&format!("/api/v1/invitations/{id}/resend"), &key, json!({}))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// The properties a schema of the document names, through `allOf` and
/// `$ref`: each with how many parts of the schema define it.
fn properties(document: &Value, schema: &Value, into: &mut Vec<String>) {
    if let Some(target) = schema["$ref"].as_str() {
        let name = target.rsplit('/').next().unwrap();
        return properties(document, &document["components"]["schemas"][name], into);
    }
    for part in schema["allOf"].as_array().into_iter().flatten() {
        properties(document, part, into);
    }
    into.extend(
        schema["properties"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, _)| k.clone()),
    );
}

#[tokio::test]
async fn invitation_answers_name_each_key_once_as_their_schemas_say() {
    let smtp = SmtpServer::start().await;
    let app = app_sending_to(smtp.port()).await;
    let (_, key) = app.new_user("acme").await;
    let (_, document) = app
        .call(Method::GET, "/api/v1/openapi.json", None, None)
        .await;
    let raw = |res: reqwest::Response| async move {
        assert!(res.status().is_success(), "{res:?}");
        res.text().await.unwrap()
    };
    let created = raw(app
        .client
        .post(app.url("/api/v1/invitations"))
        .bearer_auth(&key)
        .json(&json!({"email": "nia@example.com", "role": "viewer"}))
        .send()
        .await
        .unwrap())
    .await;
    let id = serde_json::from_str::<Value>(&created).unwrap()["id"].clone();
    let resent = raw(app
        .client
        .post(app.url(&format!("/api/v1/invitations/{id}/resend")))
        .bearer_auth(&key)
        .json(&json!({}))
        .send()
        .await
        .unwrap())
    .await;
    for (text, schema) in [(created, "CreatedInvitation"), (resent, "ResentInvitation")] {
        // A JSON object with a key twice reads as its last value in most
        // parsers and is refused by strict ones: count them in the text.
        assert_eq!(text.matches("\"email\":").count(), 1, "{text}");
        let answer: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(answer["email"], "nia@example.com", "{text}");
        assert_eq!(answer["mail"]["sent"], true, "{text}");
        let mut named = Vec::new();
        properties(
            &document,
            &document["components"]["schemas"][schema],
            &mut named,
        );
        let mut unique = named.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(
            unique.len(),
            named.len(),
            "{schema} defines a key twice: {named:?}"
        );
        for key in answer.as_object().unwrap().keys() {
            assert!(named.contains(key), "{key} not in {schema}: {named:?}");
        }
    }
}
