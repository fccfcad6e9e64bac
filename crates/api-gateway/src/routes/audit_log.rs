//! `GET /api/v1/audit-log`: the organisation's audit entries, newest first,
//! filtered and paged (docs/api.md). Writing them is `crate::audit`'s.

use crate::access::auth::AuthUser;
use crate::api::table::{routes, Routes};
use crate::http::error::{ApiError, FieldError};
use crate::http::validation::{list_body, Keyset, ListBody, DEFAULT_PAGE_SIZE};
use crate::state::AppState;
use actix_web::{web, HttpResponse};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

pub fn routes() -> Routes {
    routes![list: ADMIN]
}

/// The longest `resource_kind` or `action` filter (the names are short).
const MAX_NAME_CHARS: usize = 64;

/// The filters and the page of `GET /api/v1/audit-log`; they combine (AND).
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Entries per page, 1 to 100 (default 50).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// The `next_cursor` of the previous page; omit for the first page.
    pub cursor: Option<String>,
    /// Only what this user did.
    pub actor: Option<i64>,
    /// Only entries about this kind of resource: `monitor`, `alert_contact`,
    /// `api_key`, `member`, `invitation`, `organisation`, `incident`,
    /// `escalation_policy`.
    #[param(max_length = 64)]
    pub resource_kind: Option<String>,
    /// Only entries about the resource with this id.
    pub resource_id: Option<i64>,
    /// Only this action: `create`, `bulk_create`, `update`, `delete`, `revoke`,
    /// `accept`, `leave`, `check`, `resend_verification`, `resend`, `test`,
    /// `use`.
    #[param(max_length = 64)]
    pub action: Option<String>,
    /// Only entries recorded at or after this time (RFC 3339).
    pub since: Option<DateTime<Utc>>,
    /// Only entries recorded before this time (RFC 3339).
    pub until: Option<DateTime<Utc>>,
}

/// One write: who, when, from where, what, and how.
#[derive(Debug, Serialize, ToSchema)]
pub struct AuditEntryResponse {
    pub id: i64,
    pub org_id: i64,
    /// The user who acted (the key's holder).
    pub actor_user_id: i64,
    /// The first 8 characters of the key used.
    pub key_prefix: String,
    /// The caller's address as the gateway saw it.
    pub address: Option<String>,
    pub at: DateTime<Utc>,
    pub action: String,
    pub resource_kind: String,
    pub resource_id: Option<i64>,
    /// `{"field": {"before": ..., "after": ...}}` for every changed field;
    /// secrets are `"[changed]"`, `"[set]"` or `"[removed]"`.
    #[schema(value_type = Object)]
    pub changes: serde_json::Value,
}

list_body!(older AuditLogPage, entries: AuditEntryResponse);

/// The organisation's audit log, newest first. A key with a label selector
/// sees only the entries about what it reaches: an entry naming a monitor
/// it does not reach (one deleted since included), or a window's or page's
/// selector wider than its own, is left out.
#[utoipa::path(get, path = "/api/v1/audit-log", operation_id = "listAuditLog", tag = "audit-log",
    params(AuditQuery), responses((status = 200, body = AuditLogPage)))]
pub async fn list(
    state: web::Data<AppState>,
    user: AuthUser,
    query: web::Query<AuditQuery>,
) -> Result<HttpResponse, ApiError> {
    let query = query.into_inner();
    let page = Keyset::parse(query.limit, query.cursor.as_deref(), DEFAULT_PAGE_SIZE)?;
    let mut problems = Vec::new();
    for (name, value) in [
        ("resource_kind", &query.resource_kind),
        ("action", &query.action),
    ] {
        if value
            .as_ref()
            .is_some_and(|v| v.chars().count() > MAX_NAME_CHARS)
        {
            problems.push(FieldError::new(
                name,
                format!("at most {MAX_NAME_CHARS} characters"),
            ));
        }
    }
    // `until` before `since` is an empty range, answered with an empty page.
    if !problems.is_empty() {
        return Err(ApiError::InvalidQuery(problems));
    }
    let filter = uptime_db::audit_log::AuditFilter {
        actor_user_id: query.actor,
        resource_kind: query.resource_kind,
        resource_id: query.resource_id,
        action: query.action,
        since: query.since,
        until: query.until,
    };
    let mut conn = state.conn().await?;
    // Newest first: the cursor is the last id shown, the next page is below it.
    AuditLogPage::respond(
        page,
        |after, n| uptime_db::audit_log::list_page(&mut conn, user.reach(), &filter, after, n),
        |e| e.id,
        |e| AuditEntryResponse {
            id: e.id,
            org_id: e.org_id,
            actor_user_id: e.actor_user_id,
            key_prefix: e.key_prefix,
            address: e.address,
            at: e.at,
            action: e.action,
            resource_kind: e.resource_kind,
            resource_id: e.resource_id,
            changes: e.changes,
        },
    )
    .await
}
