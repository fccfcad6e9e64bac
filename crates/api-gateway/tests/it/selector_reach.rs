//! A key with a label selector reaches only the monitors its selector holds,
//! on every route (issue 35, section 3). The routes come from
//! `api_gateway::authz::ROUTES`, and each is classified here: a route that
//! reads or acts on anything of a monitor is probed with an outside
//! monitor's things, and the selector key must get exactly what a key of
//! another organisation gets (the same status and body), or, for lists,
//! not see them (while the organisation's unlimited key does). A route the
//! classification does not know fails the test, so a new route cannot be
//! forgotten.

use crate::common::{spawn_app, TestApp};
use api_gateway::authz::{self, Access};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

mod world;

use world::*;

/// A request, for the caller whose things `own_*` name.
#[derive(Clone)]
struct Probe {
    method: Method,
    path: String,
    body: Option<Value>,
}

fn probe(method: Method, path: impl Into<String>, body: Option<Value>) -> Probe {
    Probe {
        method,
        path: path.into(),
        body,
    }
}

/// What a route must do for a selector key, about the outside monitor.
enum Class {
    /// Touches nothing of a monitor (why, for the reader).
    Unrelated(&'static str),
    /// Names the outside monitor's thing: the selector key's answer is the
    /// other organisation's key's, to the request made with that key's own
    /// things (`for_scoped`, `for_other`).
    Named(Vec<(Probe, Probe)>),
    /// A list: the outside monitor's thing is absent for the selector key
    /// and present for the unlimited key (`listed` finds it in an answer).
    Listed(Probe, fn(&World, &Value) -> bool),
    /// A ref the outside thing holds: refused with the conflict every
    /// taken ref gets, which does not say what holds it (the same answer as
    /// for a ref the key's own monitor holds).
    RefTaken { outside: Probe, own: Probe },
    /// Refused to every key with a selector, whatever it names.
    RefusedToSelectorKeys(Probe),
}

/// Both callers make the same request (nothing of their own in it).
fn same(p: Probe) -> (Probe, Probe) {
    (p.clone(), p)
}

fn tcp_monitor(extra: Value) -> Value {
    let mut body = json!({"name": "n", "type": "tcp", "target": "127.0.0.1:9",
        "labels": {"team": "payments"}});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
}

/// How `method path` treats the outside monitor; `None`: not classified.
fn classify(w: &World, method: &str, path: &str) -> Option<Class> {
    use Class::*;
    let x = w.outside;
    let get = |p: String| probe(Method::GET, p, None);
    let m = |method: Method, p: String, body: Option<Value>| probe(method, p, body);
    Some(match (method, path) {
        ("GET", "/api/v1/monitors") => Listed(get("/api/v1/monitors".into()), |w, page| {
            ids_in(page, "monitors", "id").contains(&w.outside)
        }),
        ("POST", "/api/v1/monitors") => Named(vec![same(m(
            Method::POST,
            "/api/v1/monitors".into(),
            Some(tcp_monitor(json!({"depends_on": [x]}))),
        ))]),
        ("POST", "/api/v1/monitors/bulk") => Named(vec![same(m(
            Method::POST,
            "/api/v1/monitors/bulk".into(),
            Some(json!({"monitors": [tcp_monitor(json!({"depends_on": [x]}))]})),
        ))]),
        ("GET" | "PATCH" | "DELETE", "/api/v1/monitors/{id}") => {
            let method = Method::from_bytes(method.as_bytes()).unwrap();
            let mut probes = vec![same(m(
                method.clone(),
                format!("/api/v1/monitors/{x}"),
                (method == Method::PATCH).then(|| json!({"name": "mine now"})),
            ))];
            if method == Method::PATCH {
                // Its own monitor made to depend on the outside one.
                let depends = Some(json!({"depends_on": [x]}));
                probes.push((
                    m(
                        Method::PATCH,
                        format!("/api/v1/monitors/{}", w.own_monitor),
                        depends.clone(),
                    ),
                    m(
                        Method::PATCH,
                        format!("/api/v1/monitors/{}", w.other_monitor),
                        depends,
                    ),
                ));
            }
            Named(probes)
        }
        ("GET" | "DELETE", "/api/v1/monitors/by-ref/{ref}") => Named(vec![same(m(
            Method::from_bytes(method.as_bytes()).unwrap(),
            format!("/api/v1/monitors/by-ref/{OUTSIDE_REF}"),
            None,
        ))]),
        ("PUT", "/api/v1/monitors/by-ref/{ref}") => RefTaken {
            outside: m(
                Method::PUT,
                format!("/api/v1/monitors/by-ref/{OUTSIDE_REF}"),
                Some(tcp_monitor(json!({}))),
            ),
            // Its own monitor's ref, from a create: taken as well.
            own: m(
                Method::POST,
                "/api/v1/monitors".into(),
                Some(tcp_monitor(json!({"ref": OWN_REF}))),
            ),
        },
        ("POST", "/api/v1/apply") => RefusedToSelectorKeys(m(
            Method::POST,
            "/api/v1/apply".into(),
            Some(json!({"resources": []})),
        )),
        ("POST", "/api/v1/monitors/{id}/check") => Named(vec![same(m(
            Method::POST,
            format!("/api/v1/monitors/{x}/check"),
            Some(json!({})),
        ))]),
        ("GET", "/api/v1/monitors/{id}/results")
        | ("GET", "/api/v1/monitors/{id}/rounds")
        | ("GET", "/api/v1/monitors/{id}/uptime/daily")
        | ("GET", "/api/v1/monitors/{id}/escalation-policy") => {
            Named(vec![same(get(path.replace("{id}", &x.to_string())))])
        }
        ("PUT", "/api/v1/monitors/{id}/escalation-policy") => Named(vec![same(m(
            Method::PUT,
            format!("/api/v1/monitors/{x}/escalation-policy"),
            Some(json!({"escalation_policy_id": null})),
        ))]),
        ("POST" | "DELETE", "/api/v1/monitors/{id}/badge-token") => Named(vec![same(m(
            Method::from_bytes(method.as_bytes()).unwrap(),
            format!("/api/v1/monitors/{x}/badge-token"),
            None,
        ))]),
        ("GET", "/api/v1/alert-contacts/{id}/deliveries") => Listed(
            get(format!("/api/v1/alert-contacts/{}/deliveries", w.contact)),
            |w, page| {
                page["deliveries"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|d| d["monitor_id"] == w.outside)
            },
        ),
        ("GET" | "POST", "/api/v1/alert-contacts")
        | ("GET" | "PATCH" | "DELETE", "/api/v1/alert-contacts/{id}")
        | ("GET" | "PUT" | "DELETE", "/api/v1/alert-contacts/by-ref/{ref}")
        | ("POST", "/api/v1/alert-contacts/{id}/resend-verification")
        | ("POST", "/api/v1/alert-contacts/{id}/test") => {
            Unrelated("contacts are the organisation's; their deliveries are classified above")
        }
        ("GET" | "POST", "/api/v1/escalation-policies")
        | ("GET" | "PATCH" | "DELETE", "/api/v1/escalation-policies/{id}")
        | ("GET" | "PUT" | "DELETE", "/api/v1/escalation-policies/by-ref/{ref}") => {
            Unrelated("a policy names contacts; monitors name it, on their own routes")
        }
        ("GET" | "POST", "/api/v1/api-keys")
        | ("GET" | "DELETE", "/api/v1/api-keys/{id}")
        | ("GET", "/api/v1/members")
        | ("GET" | "PATCH" | "DELETE", "/api/v1/members/{id}")
        | ("GET" | "POST", "/api/v1/invitations")
        | ("GET" | "DELETE", "/api/v1/invitations/{id}")
        | ("POST", "/api/v1/invitations/{id}/resend")
        | ("GET" | "PATCH" | "DELETE", "/api/v1/organisation")
        | ("GET", "/api/v1/regions")
        | ("GET", "/api/v1/usage") => {
            Unrelated("the organisation's members, keys, regions and quota figures")
        }
        ("GET", "/api/v1/audit-log") => Listed(get("/api/v1/audit-log".into()), |w, page| {
            // The outside monitor's entries, and the window's and page's
            // naming it.
            page["entries"].as_array().unwrap().iter().any(|e| {
                let about =
                    |kind: &str, id: i64| e["resource_kind"] == kind && e["resource_id"] == id;
                about("monitor", w.outside)
                    || about("monitor_badge", w.outside)
                    || about("maintenance_window", w.outside_window)
                    || about("status_page", w.outside_page)
            })
        }),
        ("GET", "/api/v1/incidents") => Listed(get("/api/v1/incidents".into()), |w, page| {
            page["incidents"]
                .as_array()
                .unwrap()
                .iter()
                .any(|i| i["id"] == w.outside_incident.to_string())
        }),
        ("GET", "/api/v1/incidents/{id}") => Named(vec![same(get(format!(
            "/api/v1/incidents/{}",
            w.outside_incident
        )))]),
        ("POST", "/api/v1/incidents/{id}/acknowledge") => Named(vec![same(m(
            Method::POST,
            format!("/api/v1/incidents/{}/acknowledge", w.outside_incident),
            None,
        ))]),
        ("GET", "/api/v1/metrics") => Listed(get("/api/v1/metrics".into()), |w, page| {
            page.as_str()
                .unwrap_or_default()
                .contains(&format!("monitor_id=\"{}\"", w.outside))
        }),
        ("GET", "/api/v1/maintenance-windows") => {
            Listed(get("/api/v1/maintenance-windows".into()), |w, page| {
                ids_in(page, "maintenance_windows", "id").contains(&w.outside_window)
            })
        }
        ("POST", "/api/v1/maintenance-windows") => Named(vec![same(m(
            Method::POST,
            "/api/v1/maintenance-windows".into(),
            Some(json!({"name": "mine", "monitor_ids": [x], "duration_minutes": 10})),
        ))]),
        ("GET" | "PATCH" | "DELETE", "/api/v1/maintenance-windows/{id}") => {
            let method = Method::from_bytes(method.as_bytes()).unwrap();
            let body = (method == Method::PATCH).then(|| json!({"name": "mine now"}));
            Named(vec![same(m(
                method,
                format!("/api/v1/maintenance-windows/{}", w.outside_window),
                body,
            ))])
        }
        ("GET" | "DELETE", "/api/v1/maintenance-windows/by-ref/{ref}") => Named(vec![same(m(
            Method::from_bytes(method.as_bytes()).unwrap(),
            format!("/api/v1/maintenance-windows/by-ref/{OUTSIDE_WINDOW_REF}"),
            None,
        ))]),
        ("PUT", "/api/v1/maintenance-windows/by-ref/{ref}") => RefTaken {
            outside: m(
                Method::PUT,
                format!("/api/v1/maintenance-windows/by-ref/{OUTSIDE_WINDOW_REF}"),
                Some(
                    json!({"name": "mine", "label_selector": {"team": "payments"},
                    "duration_minutes": 10}),
                ),
            ),
            own: m(
                Method::POST,
                "/api/v1/maintenance-windows".into(),
                Some(
                    json!({"name": "mine", "label_selector": {"team": "payments"},
                    "duration_minutes": 10, "ref": OWN_WINDOW_REF}),
                ),
            ),
        },
        ("GET", "/api/v1/status-pages") => Listed(get("/api/v1/status-pages".into()), |w, page| {
            ids_in(page, "status_pages", "id").contains(&w.outside_page)
        }),
        ("POST", "/api/v1/status-pages") => Named(vec![same(m(
            Method::POST,
            "/api/v1/status-pages".into(),
            Some(json!({"slug": "mine-page", "title": "Mine",
                "groups": [{"name": "g", "monitor_ids": [x]}]})),
        ))]),
        ("GET" | "DELETE", "/api/v1/status-pages/by-ref/{ref}") => Named(vec![same(m(
            Method::from_bytes(method.as_bytes()).unwrap(),
            format!("/api/v1/status-pages/by-ref/{OUTSIDE_PAGE_REF}"),
            None,
        ))]),
        ("PUT", "/api/v1/status-pages/by-ref/{ref}") => RefTaken {
            outside: m(
                Method::PUT,
                format!("/api/v1/status-pages/by-ref/{OUTSIDE_PAGE_REF}"),
                Some(json!({"slug": "mine-page", "title": "Mine", "groups": []})),
            ),
            own: m(
                Method::POST,
                "/api/v1/status-pages".into(),
                Some(json!({"slug": "mine-page", "title": "Mine", "groups": [],
                    "ref": OWN_PAGE_REF})),
            ),
        },
        (
            method,
            p @ ("/api/v1/status-pages/{id}"
            | "/api/v1/status-pages/{id}/access-token"
            | "/api/v1/status-pages/{id}/notices"
            | "/api/v1/status-pages/{id}/notices/{notice_id}"
            | "/api/v1/status-pages/{id}/notices/{notice_id}/updates"
            | "/api/v1/status-pages/{id}/subscribers"
            | "/api/v1/status-pages/{id}/subscribers/{subscriber_id}"),
        ) => {
            let concrete = p
                .replace("{id}", &w.outside_page.to_string())
                .replace("{notice_id}", &w.outside_notice.to_string())
                .replace("{subscriber_id}", "1");
            let method = Method::from_bytes(method.as_bytes()).unwrap();
            let body = match (&method, p) {
                (&Method::PATCH, _) => Some(json!({"title": "mine now"})),
                (&Method::POST, p) if p.ends_with("/notices") => {
                    Some(json!({"title": "t", "body": "b"}))
                }
                (&Method::POST, p) if p.ends_with("/updates") => {
                    Some(json!({"body": "b", "state": "monitoring"}))
                }
                _ => None,
            };
            Named(vec![same(m(method, concrete, body))])
        }
        _ => return None,
    })
}

async fn send(app: &TestApp, key: &str, p: &Probe) -> (StatusCode, Value) {
    app.call(p.method.clone(), &p.path, Some(key), p.body.clone())
        .await
}

#[tokio::test]
async fn a_selector_key_gets_for_an_outside_monitor_what_another_organisation_gets_on_every_route()
{
    let app = spawn_app().await;
    let w = world(&app).await;
    let mut unclassified = Vec::new();
    let mut wrong = Vec::new();
    let mut probed = 0;
    let mut classes = Vec::new();
    for route in authz::ROUTES {
        if route.access == Access::Public {
            // No key: the path's token is the credential (or the route is
            // the document); no selector applies.
            continue;
        }
        match classify(&w, route.method, route.path) {
            Some(class) => classes.push((format!("{} {}", route.method, route.path), class)),
            None => unclassified.push(format!("{} {}", route.method, route.path)),
        }
    }
    // Lists first, deletes last: were a probe to succeed, what it changed
    // must not hide what the others would find.
    classes.sort_by_key(|(name, class)| match class {
        Class::Listed(..) => 0,
        _ if name.starts_with("DELETE") => 2,
        _ => 1,
    });
    for (name, class) in classes {
        match class {
            Class::Unrelated(why) => assert!(!why.is_empty(), "{name}"),
            Class::Named(probes) => {
                for (scoped, other) in probes {
                    probed += 1;
                    let got = send(&app, &w.scoped, &scoped).await;
                    let expected = send(&app, &w.other, &other).await;
                    if got != expected {
                        wrong.push(format!(
                            "{name} ({} {}): the selector key got {} {}, another organisation's \
                             key {} {}",
                            scoped.method, scoped.path, got.0, got.1, expected.0, expected.1
                        ));
                    }
                }
            }
            Class::Listed(p, listed) => {
                probed += 1;
                let (status, seen) = send(&app, &w.full, &p).await;
                assert_eq!(status, StatusCode::OK, "{name} with the full key: {seen}");
                assert!(
                    listed(&w, &seen),
                    "{name}: the full key sees the outside monitor's thing: {seen}"
                );
                let (status, seen) = send(&app, &w.scoped, &p).await;
                if status != StatusCode::OK || listed(&w, &seen) {
                    wrong.push(format!(
                        "{name}: the selector key sees the outside monitor's thing: {status} {seen}"
                    ));
                }
            }
            Class::RefTaken { outside, own } => {
                probed += 1;
                let got = send(&app, &w.scoped, &outside).await;
                let own = send(&app, &w.scoped, &own).await;
                if got.0 != StatusCode::CONFLICT || got != own {
                    wrong.push(format!(
                        "{name}: a ref of an outside monitor's thing got {} {}, a ref its own \
                         monitor holds {} {}",
                        got.0, got.1, own.0, own.1
                    ));
                }
            }
            Class::RefusedToSelectorKeys(p) => {
                probed += 1;
                let (status, answer) = send(&app, &w.scoped, &p).await;
                if status != StatusCode::FORBIDDEN {
                    wrong.push(format!("{name}: {status} {answer}"));
                }
            }
        }
    }
    assert!(
        unclassified.is_empty(),
        "routes this test does not classify (say how each treats a monitor out of a key's \
         selector): {unclassified:#?}"
    );
    assert!(probed > 40, "{probed} probes");
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));

    // What is its own stays in sight: its page's and window's entries, its
    // monitor in the metrics.
    let (_, log) = app.get("/api/v1/audit-log", &w.scoped).await;
    let kinds: Vec<&str> = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["resource_kind"].as_str())
        .collect();
    assert!(
        kinds.contains(&"status_page") && kinds.contains(&"maintenance_window"),
        "{log}"
    );
    let (_, metrics) = app.get("/api/v1/metrics", &w.scoped).await;
    assert!(
        metrics
            .as_str()
            .unwrap()
            .contains(&format!("monitor_id=\"{}\"", w.own_monitor)),
        "{metrics}"
    );

    // A window or page naming its own monitors by id is its own to make.
    let (status, window) = app
        .post(
            "/api/v1/maintenance-windows",
            &w.scoped,
            json!({"name": "mine", "monitor_ids": [w.own_monitor], "duration_minutes": 10}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{window}");
    let (status, _) = app
        .get(
            &format!("/api/v1/maintenance-windows/{}", window["id"]),
            &w.scoped,
        )
        .await;
    assert_eq!(status, StatusCode::OK);

    // Its own monitor's incident names no monitor out of its reach.
    let own = format!("/api/v1/incidents/{}", w.own_incident);
    let (_, seen) = app.get(&own, &w.full).await;
    assert_eq!(seen["blocked_by"], json!([w.outside]), "{seen}");
    let (_, seen) = app.get(&own, &w.scoped).await;
    assert_eq!(seen["blocked_by"], json!([]), "{seen}");
    let (_, listed) = app.get("/api/v1/incidents", &w.scoped).await;
    assert!(
        listed["incidents"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["blocked_by"] == json!([])),
        "{listed}"
    );

    // Nothing of the outside monitor changed on the way.
    let (status, incident) = app
        .get(
            &format!("/api/v1/incidents/{}", w.outside_incident),
            &w.full,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert!(incident["acknowledged"].is_null(), "{incident}");
    let (status, _) = app
        .get(&format!("/api/v1/monitors/{}", w.outside), &w.full)
        .await;
    assert_eq!(status, StatusCode::OK);
}
