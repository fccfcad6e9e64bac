//! The audit log (issue 21): every write leaves exactly one entry naming its
//! actor, in the transaction of the change, so a write that fails leaves
//! none; secrets never appear; the list filters and pages.

use crate::common::TestApp;
use reqwest::{Method, StatusCode};
use serde_json::Value;

/// Write routes no scenario of `writes` covers, and why.
const AUDITED_ELSEWHERE: &[(&str, &str, &str)] = &[
    (
        "PUT",
        "/api/v1/monitors/by-ref/{ref}",
        "tests/it/apply/audit.rs: one entry per create or replacement, none when nothing changes",
    ),
    (
        "PUT",
        "/api/v1/alert-contacts/by-ref/{ref}",
        "tests/it/apply/audit.rs: one entry per create or replacement, none when nothing changes",
    ),
    (
        "DELETE",
        "/api/v1/monitors/by-ref/{ref}",
        "tests/it/by_ref.rs: the id route's delete, its one entry",
    ),
    (
        "DELETE",
        "/api/v1/alert-contacts/by-ref/{ref}",
        "tests/it/by_ref.rs: the id route's delete, its one entry",
    ),
    (
        "PUT",
        "/api/v1/maintenance-windows/by-ref/{ref}",
        "tests/it/by_ref_kinds.rs: one entry per create or replacement, none when nothing changes",
    ),
    (
        "DELETE",
        "/api/v1/maintenance-windows/by-ref/{ref}",
        "tests/it/by_ref_kinds.rs: the id route's delete, its one entry",
    ),
    (
        "PUT",
        "/api/v1/status-pages/by-ref/{ref}",
        "tests/it/by_ref_kinds.rs: one entry per create or replacement, none when nothing changes",
    ),
    (
        "DELETE",
        "/api/v1/status-pages/by-ref/{ref}",
        "tests/it/by_ref_kinds.rs: the id route's delete, its one entry",
    ),
    (
        "PUT",
        "/api/v1/escalation-policies/by-ref/{ref}",
        "tests/it/by_ref_kinds.rs: one entry per create or replacement, none when nothing changes",
    ),
    (
        "DELETE",
        "/api/v1/escalation-policies/by-ref/{ref}",
        "tests/it/by_ref_kinds.rs: the id route's delete, its one entry",
    ),
    (
        "POST",
        "/api/v1/apply",
        "tests/it/apply/audit.rs: entries per resource written, none for a dry run or a refusal",
    ),
    (
        "DELETE",
        "/api/v1/organisation",
        "its entry goes with the organisation's log; members::the_organisation_is_read_renamed_and_deleted_with_everything_of_it \
         checks that it is published",
    ),
    (
        "POST",
        "/api/v1/incidents/{id}/acknowledge",
        "tests/it/incidents.rs: needs an incident, which the recorder opens",
    ),
    (
        "POST",
        "/api/v1/status-pages",
        "tests/it/status_pages.rs: one entry per write, tokens never in it",
    ),
    (
        "PATCH",
        "/api/v1/status-pages/{id}",
        "tests/it/status_pages.rs: one entry per write, tokens never in it",
    ),
    (
        "DELETE",
        "/api/v1/status-pages/{id}",
        "tests/it/status_pages.rs: one entry per write, tokens never in it",
    ),
    (
        "POST",
        "/api/v1/status-pages/{id}/access-token",
        "tests/it/status_pages.rs: one entry per write, tokens never in it",
    ),
    (
        "POST",
        "/api/v1/monitors/{id}/badge-token",
        "tests/it/status_pages.rs: one entry per write, tokens never in it",
    ),
    (
        "DELETE",
        "/api/v1/monitors/{id}/badge-token",
        "tests/it/status_pages.rs: one entry per write, tokens never in it",
    ),
    (
        "POST",
        "/api/v1/status-pages/{id}/notices",
        "tests/it/status_pages.rs: one entry per write, tokens never in it",
    ),
    (
        "DELETE",
        "/api/v1/status-pages/{id}/notices/{notice_id}",
        "tests/it/status_pages.rs: one entry per write, tokens never in it",
    ),
    (
        "DELETE",
        "/api/v1/status-pages/{id}/subscribers/{subscriber_id}",
        "tests/it/status_page_subscribers.rs: needs a subscriber, which the status-pages service makes",
    ),
    (
        "POST",
        "/api/v1/status-pages/{id}/notices/{notice_id}/updates",
        "tests/it/status_pages.rs: one entry per write, tokens never in it",
    ),
    (
        "POST",
        "/api/v1/escalation-policies",
        "tests/it/escalation_policies.rs: one entry per create, update and delete",
    ),
    (
        "PATCH",
        "/api/v1/escalation-policies/{id}",
        "tests/it/escalation_policies.rs",
    ),
    (
        "DELETE",
        "/api/v1/escalation-policies/{id}",
        "tests/it/escalation_policies.rs",
    ),
    (
        "PUT",
        "/api/v1/monitors/{id}/escalation-policy",
        "tests/it/escalation_policies.rs: an update entry of the monitor per change",
    ),
];

/// The route pattern of a scenario's path: placeholders and ids become `{id}`.
pub(crate) fn pattern_of(path: &str) -> String {
    path.split('/')
        .map(|segment| {
            if segment.starts_with('{')
                || (!segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit()))
            {
                "{id}"
            } else {
                segment
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// A write of the scenario: method, path, body, expected status, and the
/// action and resource kind its entry must name.
pub(crate) type Step = (
    Method,
    String,
    Option<Value>,
    StatusCode,
    &'static str,
    &'static str,
);

pub(crate) async fn entries(app: &TestApp, key: &str, query: &str) -> Vec<Value> {
    let (status, page) = app.get(&format!("/api/v1/audit-log{query}"), key).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    page["entries"].as_array().unwrap().clone()
}

pub(crate) async fn count(app: &TestApp, key: &str) -> usize {
    entries(app, key, "?limit=100").await.len()
}

mod reading;
mod writes;
