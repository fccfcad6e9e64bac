//! `GET` and `DELETE .../by-ref/{ref}` of every kind that carries a ref: the
//! id routes' answers for the resource with that ref, so a client that
//! manages resources by ref (a file, the Kubernetes operator) never pages a
//! collection to find an id.
//!
//! Each resolves the ref to its id (one indexed query: the partial unique
//! index on `(org_id, ref)`) and then runs the id route's handler, so the
//! answer, its `ETag`, `If-Match`/`If-None-Match`, the key's reach, the
//! audit entry and the change announced are the id route's, with nothing
//! copied. A ref is immutable and never moves to another row, so the id
//! found names the same resource when the id route reads it; if it was
//! deleted in between, the `404` names the ref as when it never existed.

use super::{contacts, escalation_policies, maintenance_windows, monitors, status_pages};
use crate::auth::AuthUser;
use crate::error::{ApiError, ErrorBody};
use crate::etag::IfMatch;
use crate::refs::{naming_ref, resolve};
use crate::state::AppState;
use actix_web::{web, HttpResponse};
use uptime_db::refs::RefKind;

/// Read the caller's monitor with this ref: what `GET /api/v1/monitors/{id}`
/// answers for its id.
#[utoipa::path(get, path = "/api/v1/monitors/by-ref/{ref}", operation_id = "getMonitorByRef", tag = "monitors", security(("bearer" = [])),
    params(("ref" = String, Path, description = "The monitor's ref: 1 to 255 of lowercase letters, digits, `.`, `_`, `-`, alphanumeric at both ends", min_length = 1, max_length = 255, pattern = "^[a-z0-9]([a-z0-9._-]{0,253}[a-z0-9])?$")),
    responses((status = 200, body = monitors::MonitorResponse),
        (status = 400, body = ErrorBody, description = "the ref is malformed (`ref`)"),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "no monitor of the organisation has this ref, or it is out of the key's reach (`ref`)")))]
pub async fn get_monitor_by_ref(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let r#ref = path.into_inner();
    let kind = RefKind::Monitor;
    let id = resolve(&state, user.org_id, kind, &r#ref).await?;
    naming_ref(monitors::get(state, user, id.into()).await, kind, &r#ref)
}

/// Delete the caller's monitor with this ref, as
/// `DELETE /api/v1/monitors/{id}` does (`If-Match` honoured, one audit
/// entry).
#[utoipa::path(delete, path = "/api/v1/monitors/by-ref/{ref}", operation_id = "deleteMonitorByRef", tag = "monitors", security(("bearer" = [])),
    params(("ref" = String, Path, description = "The monitor's ref: 1 to 255 of lowercase letters, digits, `.`, `_`, `-`, alphanumeric at both ends", min_length = 1, max_length = 255, pattern = "^[a-z0-9]([a-z0-9._-]{0,253}[a-z0-9])?$")),
    responses((status = 204),
        (status = 400, body = ErrorBody, description = "the ref is malformed (`ref`)"),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "no monitor of the organisation has this ref, or it is out of the key's reach (`ref`)"),
        (status = 412, body = ErrorBody, description = "`If-Match` names another version")))]
pub async fn delete_monitor_by_ref(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<String>,
    if_match: IfMatch,
) -> Result<HttpResponse, ApiError> {
    let r#ref = path.into_inner();
    let kind = RefKind::Monitor;
    let id = resolve(&state, user.org_id, kind, &r#ref).await?;
    naming_ref(
        monitors::delete(state, user, id.into(), if_match).await,
        kind,
        &r#ref,
    )
}

/// Read the caller's alert contact with this ref: what
/// `GET /api/v1/alert-contacts/{id}` answers for its id.
#[utoipa::path(get, path = "/api/v1/alert-contacts/by-ref/{ref}", operation_id = "getContactByRef", tag = "alert-contacts", security(("bearer" = [])),
    params(("ref" = String, Path, description = "The contact's ref: 1 to 255 of lowercase letters, digits, `.`, `_`, `-`, alphanumeric at both ends", min_length = 1, max_length = 255, pattern = "^[a-z0-9]([a-z0-9._-]{0,253}[a-z0-9])?$")),
    responses((status = 200, body = contacts::ContactResponse),
        (status = 400, body = ErrorBody, description = "the ref is malformed (`ref`)"),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "no contact of the organisation has this ref (`ref`)")))]
pub async fn get_contact_by_ref(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let r#ref = path.into_inner();
    let kind = RefKind::AlertContact;
    let id = resolve(&state, user.org_id, kind, &r#ref).await?;
    naming_ref(contacts::get(state, user, id.into()).await, kind, &r#ref)
}

/// Delete the caller's alert contact with this ref, as
/// `DELETE /api/v1/alert-contacts/{id}` does (`If-Match` honoured, one
/// audit entry); monitors stop notifying it.
#[utoipa::path(delete, path = "/api/v1/alert-contacts/by-ref/{ref}", operation_id = "deleteContactByRef", tag = "alert-contacts", security(("bearer" = [])),
    params(("ref" = String, Path, description = "The contact's ref: 1 to 255 of lowercase letters, digits, `.`, `_`, `-`, alphanumeric at both ends", min_length = 1, max_length = 255, pattern = "^[a-z0-9]([a-z0-9._-]{0,253}[a-z0-9])?$")),
    responses((status = 204),
        (status = 400, body = ErrorBody, description = "the ref is malformed (`ref`)"),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "no contact of the organisation has this ref (`ref`)"),
        (status = 412, body = ErrorBody, description = "`If-Match` names another version")))]
pub async fn delete_contact_by_ref(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<String>,
    if_match: IfMatch,
) -> Result<HttpResponse, ApiError> {
    let r#ref = path.into_inner();
    let kind = RefKind::AlertContact;
    let id = resolve(&state, user.org_id, kind, &r#ref).await?;
    naming_ref(
        contacts::delete(state, user, id.into(), if_match).await,
        kind,
        &r#ref,
    )
}

/// Read the organisation's maintenance window with this ref: what
/// `GET /api/v1/maintenance-windows/{id}` answers for its id.
#[utoipa::path(get, path = "/api/v1/maintenance-windows/by-ref/{ref}", operation_id = "getMaintenanceWindowByRef", tag = "maintenance-windows", security(("bearer" = [])),
    params(("ref" = String, Path, description = "The window's ref: 1 to 255 of lowercase letters, digits, `.`, `_`, `-`, alphanumeric at both ends", min_length = 1, max_length = 255, pattern = "^[a-z0-9]([a-z0-9._-]{0,253}[a-z0-9])?$")),
    responses((status = 200, body = maintenance_windows::WindowResponse),
        (status = 400, body = ErrorBody, description = "the ref is malformed (`ref`)"),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "no window of the organisation has this ref, or it is out of the key's reach (`ref`)")))]
pub async fn get_window_by_ref(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let r#ref = path.into_inner();
    let kind = RefKind::MaintenanceWindow;
    let id = resolve(&state, user.org_id, kind, &r#ref).await?;
    naming_ref(
        maintenance_windows::get(state, user, id.into()).await,
        kind,
        &r#ref,
    )
}

/// Delete the organisation's maintenance window with this ref, as
/// `DELETE /api/v1/maintenance-windows/{id}` does (one audit entry; an open occurrence ends at the recorder's next sweep).
#[utoipa::path(delete, path = "/api/v1/maintenance-windows/by-ref/{ref}", operation_id = "deleteMaintenanceWindowByRef", tag = "maintenance-windows", security(("bearer" = [])),
    params(("ref" = String, Path, description = "The window's ref: 1 to 255 of lowercase letters, digits, `.`, `_`, `-`, alphanumeric at both ends", min_length = 1, max_length = 255, pattern = "^[a-z0-9]([a-z0-9._-]{0,253}[a-z0-9])?$")),
    responses((status = 204),
        (status = 400, body = ErrorBody, description = "the ref is malformed (`ref`)"),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "no window of the organisation has this ref, or it is out of the key's reach (`ref`)")))]
pub async fn delete_window_by_ref(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let r#ref = path.into_inner();
    let kind = RefKind::MaintenanceWindow;
    let id = resolve(&state, user.org_id, kind, &r#ref).await?;
    naming_ref(
        maintenance_windows::delete(state, user, id.into()).await,
        kind,
        &r#ref,
    )
}

/// Read the organisation's status page with this ref: what
/// `GET /api/v1/status-pages/{id}` answers for its id.
#[utoipa::path(get, path = "/api/v1/status-pages/by-ref/{ref}", operation_id = "getStatusPageByRef", tag = "status-pages", security(("bearer" = [])),
    params(("ref" = String, Path, description = "The page's ref: 1 to 255 of lowercase letters, digits, `.`, `_`, `-`, alphanumeric at both ends", min_length = 1, max_length = 255, pattern = "^[a-z0-9]([a-z0-9._-]{0,253}[a-z0-9])?$")),
    responses((status = 200, body = status_pages::body::StatusPageResponse),
        (status = 400, body = ErrorBody, description = "the ref is malformed (`ref`)"),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "no page of the organisation has this ref (`ref`)")))]
pub async fn get_status_page_by_ref(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let r#ref = path.into_inner();
    let kind = RefKind::StatusPage;
    let id = resolve(&state, user.org_id, kind, &r#ref).await?;
    naming_ref(
        status_pages::get(state, user, id.into()).await,
        kind,
        &r#ref,
    )
}

/// Delete the organisation's status page with this ref, as
/// `DELETE /api/v1/status-pages/{id}` does (one audit entry).
#[utoipa::path(delete, path = "/api/v1/status-pages/by-ref/{ref}", operation_id = "deleteStatusPageByRef", tag = "status-pages", security(("bearer" = [])),
    params(("ref" = String, Path, description = "The page's ref: 1 to 255 of lowercase letters, digits, `.`, `_`, `-`, alphanumeric at both ends", min_length = 1, max_length = 255, pattern = "^[a-z0-9]([a-z0-9._-]{0,253}[a-z0-9])?$")),
    responses((status = 204),
        (status = 400, body = ErrorBody, description = "the ref is malformed (`ref`)"),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "no page of the organisation has this ref (`ref`)")))]
pub async fn delete_status_page_by_ref(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let r#ref = path.into_inner();
    let kind = RefKind::StatusPage;
    let id = resolve(&state, user.org_id, kind, &r#ref).await?;
    naming_ref(
        status_pages::delete(state, user, id.into()).await,
        kind,
        &r#ref,
    )
}

/// Read the organisation's escalation policy with this ref: what
/// `GET /api/v1/escalation-policies/{id}` answers for its id.
#[utoipa::path(get, path = "/api/v1/escalation-policies/by-ref/{ref}", operation_id = "getEscalationPolicyByRef", tag = "escalation-policies", security(("bearer" = [])),
    params(("ref" = String, Path, description = "The policy's ref: 1 to 255 of lowercase letters, digits, `.`, `_`, `-`, alphanumeric at both ends", min_length = 1, max_length = 255, pattern = "^[a-z0-9]([a-z0-9._-]{0,253}[a-z0-9])?$")),
    responses((status = 200, body = escalation_policies::PolicyResponse),
        (status = 400, body = ErrorBody, description = "the ref is malformed (`ref`)"),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "no policy of the organisation has this ref (`ref`)")))]
pub async fn get_policy_by_ref(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let r#ref = path.into_inner();
    let kind = RefKind::EscalationPolicy;
    let id = resolve(&state, user.org_id, kind, &r#ref).await?;
    naming_ref(
        escalation_policies::get(state, user, id.into()).await,
        kind,
        &r#ref,
    )
}

/// Delete the organisation's escalation policy with this ref, as
/// `DELETE /api/v1/escalation-policies/{id}` does (one audit entry; a policy in use is not deleted).
#[utoipa::path(delete, path = "/api/v1/escalation-policies/by-ref/{ref}", operation_id = "deleteEscalationPolicyByRef", tag = "escalation-policies", security(("bearer" = [])),
    params(("ref" = String, Path, description = "The policy's ref: 1 to 255 of lowercase letters, digits, `.`, `_`, `-`, alphanumeric at both ends", min_length = 1, max_length = 255, pattern = "^[a-z0-9]([a-z0-9._-]{0,253}[a-z0-9])?$")),
    responses((status = 204),
        (status = 400, body = ErrorBody, description = "the ref is malformed (`ref`)"),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "no policy of the organisation has this ref (`ref`)"),
        (status = 409, body = ErrorBody, description = "monitors alert through it (`monitor_ids`)")))]
pub async fn delete_policy_by_ref(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let r#ref = path.into_inner();
    let kind = RefKind::EscalationPolicy;
    let id = resolve(&state, user.org_id, kind, &r#ref).await?;
    naming_ref(
        escalation_policies::delete(state, user, id.into()).await,
        kind,
        &r#ref,
    )
}
