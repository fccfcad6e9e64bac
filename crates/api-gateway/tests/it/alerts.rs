//! Email verification links, the test alert and the delivery log.

use crate::common::TestApp;
use uptime_db::models::{AlertContact, NewAlertContact};

const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

async fn contact(
    app: &TestApp,
    user_id: i64,
    kind: &str,
    value: &str,
    verified: bool,
) -> AlertContact {
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    uptime_db::contacts::create(
        &mut conn,
        &NewAlertContact {
            org_id: user_id,
            kind: kind.into(),
            name: format!("{kind} contact"),
            value: value.into(),
            verified,
            verification_token_sha256: None,
            signing_secret: (kind == "webhook").then(|| SECRET.to_string()),
            secret_sealed: None,
            options: serde_json::json!({}),
            event_kinds: None,
            min_severity: 0,
        },
    )
    .await
    .unwrap()
}

mod delivery_log;
mod test_alert;
mod verification;
