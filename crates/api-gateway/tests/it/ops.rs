//! The operator endpoints: `/metrics` (with `/healthz` and `/readyz`) on the
//! ops listener, never on the public API port.

use crate::common::spawn_app;
use reqwest::StatusCode;

#[tokio::test]
async fn metrics_are_served_on_the_ops_port_and_not_on_the_api_port() {
    let app = spawn_app().await;
    // Traffic on the API shows up in the ops port's metrics.
    let res = app.client.get(app.url("/healthz")).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);

    let res = app.client.get(app.url("/metrics")).send().await.unwrap();
    assert_eq!(
        res.status(),
        StatusCode::NOT_FOUND,
        "/metrics on the API port"
    );
    let body: serde_json::Value = res.json().await.expect("the normal JSON 404");
    assert_eq!(body, serde_json::json!({"error": "not found"}));

    let ops = format!("http://{}", app.ops_addr);
    assert_ne!(ops, app.base, "a listener of its own");
    let res = app
        .client
        .get(format!("{ops}/metrics"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let text = res.text().await.unwrap();
    assert!(
        text.contains("http_requests_total"),
        "gateway metrics on the ops port: {text}"
    );
    for probe in ["/healthz", "/readyz"] {
        let res = app
            .client
            .get(format!("{ops}{probe}"))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::OK, "{probe} on the ops port");
        // Kept on the API port for load balancers that only reach it.
        let res = app.client.get(app.url(probe)).send().await.unwrap();
        assert_eq!(res.status(), StatusCode::OK, "{probe} on the API port");
    }
}
