//! `KubeCluster` (the shell's Kubernetes side) against a mocked API server
//! (tower-test, as kube's own tests do): the requests it makes.

use http::{Request, Response};
use kube::client::Body;
use kube::Client;
use serde_json::{json, Value};
use tower_test::mock::{pair, Handle};
use uptime_operator::cluster::{Cluster, KubeCluster};
use uptime_operator::plan::{Kind, ResourceView, FINALIZER};
use uptime_operator::resources::{Monitor, MonitorSpec, ResourceStatus, SecretKeyRef};

type ApiServer = Handle<Request<Body>, Response<Body>>;

fn cluster() -> (KubeCluster, ApiServer) {
    let (service, handle) = pair::<Request<Body>, Response<Body>>();
    (
        KubeCluster::new(Client::new(service, "default"), "test".into()),
        handle,
    )
}

fn monitor_view() -> ResourceView {
    ResourceView {
        kind: Kind::Monitor,
        namespace: "payments".into(),
        name: "api".into(),
        uid: None,
        generation: Some(1),
        deleting: false,
        has_finalizer: false,
        body: serde_json::Map::new(),
        secret_fields: Vec::new(),
        status: ResourceStatus::default(),
    }
}

fn monitor(finalizers: &[&str]) -> Vec<u8> {
    let mut m = Monitor::new(
        "api",
        MonitorSpec {
            body: serde_json::Map::new(),
            secret_fields: Vec::new(),
        },
    );
    m.metadata.namespace = Some("payments".into());
    m.metadata.resource_version = Some("7".into());
    m.metadata.finalizers = Some(finalizers.iter().map(|f| f.to_string()).collect());
    serde_json::to_vec(&m).unwrap()
}

fn respond(send: tower_test::mock::SendResponse<Response<Body>>, status: u16, body: Vec<u8>) {
    send.send_response(
        Response::builder()
            .status(status)
            .body(Body::from(body))
            .unwrap(),
    );
}

async fn next(
    api: &mut ApiServer,
) -> (
    Request<Body>,
    tower_test::mock::SendResponse<Response<Body>>,
) {
    api.next_request().await.expect("a request")
}

async fn json_body(request: Request<Body>) -> Value {
    let bytes = request.into_body().collect_bytes().await.unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

#[tokio::test]
async fn the_status_is_a_merge_patch_of_the_status_subresource() {
    let (cluster, mut api) = cluster();
    let server = tokio::spawn(async move {
        let (request, send) = next(&mut api).await;
        assert_eq!(request.method(), "PATCH");
        assert_eq!(
            request.uri().path(),
            "/apis/uptime.dev/v1alpha1/namespaces/payments/monitors/api/status"
        );
        assert_eq!(
            request.headers()["content-type"],
            "application/merge-patch+json"
        );
        let body = json_body(request).await;
        respond(send, 200, monitor(&[]));
        body
    });
    let status = ResourceStatus {
        id: Some(9),
        state: Some("up".into()),
        ..Default::default()
    };
    cluster
        .write_status(&monitor_view(), &status)
        .await
        .unwrap();
    let sent = server.await.unwrap();
    assert_eq!(sent["status"]["id"], 9);
    assert_eq!(sent["status"]["state"], "up");
    assert!(sent["status"]
        .as_object()
        .unwrap()
        .get("openIncidentId")
        .is_some_and(Value::is_null));
}

#[tokio::test]
async fn the_finalizer_is_added_to_the_others_at_the_version_read() {
    let (cluster, mut api) = cluster();
    let server = tokio::spawn(async move {
        let (request, send) = next(&mut api).await;
        assert_eq!(request.method(), "GET");
        assert_eq!(
            request.uri().path(),
            "/apis/uptime.dev/v1alpha1/namespaces/payments/monitors/api"
        );
        respond(send, 200, monitor(&["other.example/keep"]));
        let (request, send) = next(&mut api).await;
        assert_eq!(request.method(), "PATCH");
        let body = json_body(request).await;
        respond(send, 200, monitor(&["other.example/keep", FINALIZER]));
        body
    });
    cluster.add_finalizer(&monitor_view()).await.unwrap();
    let sent = server.await.unwrap();
    assert_eq!(
        sent["metadata"],
        json!({"finalizers": ["other.example/keep", FINALIZER], "resourceVersion": "7"})
    );
}

#[tokio::test]
async fn a_secret_key_is_read_and_a_missing_secret_is_none() {
    let (cluster, mut api) = cluster();
    let server = tokio::spawn(async move {
        let (request, send) = next(&mut api).await;
        assert_eq!(request.method(), "GET");
        assert_eq!(
            request.uri().path(),
            "/api/v1/namespaces/payments/secrets/pagerduty"
        );
        let secret = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "pagerduty", "namespace": "payments"},
            "data": {"routing-key": "czNjcmV0"}});
        respond(send, 200, serde_json::to_vec(&secret).unwrap());
        let (_, send) = next(&mut api).await;
        let not_found = json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Failure", "message": "secrets \"gone\" not found",
            "reason": "NotFound", "code": 404});
        respond(send, 404, serde_json::to_vec(&not_found).unwrap());
    });
    let key = |name: &str| SecretKeyRef {
        name: name.into(),
        key: "routing-key".into(),
    };
    let found = cluster
        .secret_value("payments", &key("pagerduty"))
        .await
        .unwrap();
    assert_eq!(found.as_deref(), Some("s3cret"));
    let gone = cluster
        .secret_value("payments", &key("gone"))
        .await
        .unwrap();
    assert_eq!(gone, None);
    server.await.unwrap();
}
