//! `PUT /api/v1/maintenance-windows/by-ref/{ref}`: create or replace the
//! window with this ref, from a create body checked exactly as a create is
//! ([`super::checked_create`]).

use super::{
    checked_create, insert, shown, stored_definition, visible, CreateWindow, WindowResponse,
    AUDIT_KIND, REF_KIND,
};
use crate::apply::changes::FieldChange;
use crate::audit;
use crate::auth::AuthUser;
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;
use actix_web::{web, HttpResponse};
use chrono::{DateTime, Utc};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection};
use uptime_db::maintenance::{self as db, MaintenanceWindow, WindowDefinition};

/// What a create body makes of the window stored as `stored`: its
/// definition, or `None` when it would leave it as it is.
///
/// A body without `starts_at` starts "now" on a create (an ad hoc or a
/// recurring window's first start); replacing a window with the same body
/// later must not move it (the same `PUT` or apply twice changes nothing),
/// so such a body is first tried with the stored start: when that gives the
/// stored definition, nothing changes. Otherwise the body is what a fresh
/// create makes of it.
async fn replacement(
    c: &mut AsyncPgConnection,
    user: &AuthUser,
    stored: &MaintenanceWindow,
    body: CreateWindow,
    now: DateTime<Utc>,
    placeholders: bool,
) -> Result<Option<WindowDefinition>, ApiError> {
    let current = stored_definition(stored);
    if body.starts_at.is_none() {
        let mut from_stored_start = body.clone();
        from_stored_start.starts_at = Some(stored.starts_at);
        if let Ok(same) = checked_create(c, user, from_stored_start, now, placeholders).await {
            if same == current {
                return Ok(None);
            }
        }
    }
    let definition = checked_create(c, user, body, now, placeholders).await?;
    Ok((definition != current).then_some(definition))
}

/// Writes `definition` over the window `stored` (with its ref), and its
/// audit entry, in the caller's transaction.
async fn rewrite(
    c: &mut AsyncPgConnection,
    user: &AuthUser,
    stored: MaintenanceWindow,
    r#ref: &str,
    definition: &WindowDefinition,
    now: DateTime<Utc>,
) -> Result<MaintenanceWindow, ApiError> {
    let id = stored.id;
    let before = audit::shown(&shown(stored, Some(r#ref), now));
    let row = db::update(c, user.org_id, id, definition)
        .await?
        .ok_or(ApiError::NotFound)?;
    let after = audit::shown(&shown(row.clone(), Some(r#ref), now));
    audit::record(
        c,
        user,
        audit::action::UPDATE,
        AUDIT_KIND,
        Some(id),
        audit::changes(Some(&before), Some(&after)),
    )
    .await?;
    Ok(row)
}

/// Create or replace the organisation's maintenance window with this ref.
///
/// The body is a create body (`POST /api/v1/maintenance-windows`), without
/// `ref` or with the path's, checked as a create is. No window has the
/// ref: it is created with it (`201`). One has: it is replaced (`200`),
/// every field not given back at its default, its id kept. When that
/// changes nothing, nothing is written (the same `ETag` as before); a body
/// without `starts_at` keeps the stored start when that is all it would
/// change. `If-Match` is honoured (and fails when there is no window).
#[utoipa::path(put, path = "/api/v1/maintenance-windows/by-ref/{ref}", operation_id = "putMaintenanceWindowByRef", tag = "maintenance-windows", request_body = CreateWindow,
    security(("bearer" = [])),
    params(("ref" = String, Path, description = "The window's ref: 1 to 255 of lowercase letters, digits, `.`, `_`, `-`, alphanumeric at both ends", min_length = 1, max_length = 255, pattern = "^[a-z0-9]([a-z0-9._-]{0,253}[a-z0-9])?$")),
    responses((status = 200, body = WindowResponse, description = "replaced, or unchanged"),
        (status = 201, body = WindowResponse, description = "created with this ref"),
        (status = 400, body = ErrorBody, description = "`invalid request body` naming each field refused; `ref` when the path's is malformed or the body names another"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "the organisation has 200 windows, or a key limited by labels gives a selector outside its own"),
        (status = 409, body = ErrorBody, description = "the ref is not free (`ref`): another request created a window with it meanwhile, or, for a key with a label selector, a window out of its reach has it (the message does not say which)"),
        (status = 412, body = ErrorBody, description = "`If-Match` names another version, or no window has this ref"),
        (status = 413, body = ErrorBody)))]
pub async fn put_window_by_ref(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<String>,
    if_match: crate::etag::IfMatch,
    body: crate::validation::Json<CreateWindow>,
) -> Result<HttpResponse, ApiError> {
    let r#ref = path.into_inner();
    let mut body = body.into_inner();
    crate::refs::check_path(&r#ref, body.ref_.take())?;
    let now = Utc::now();
    let given_ref = r#ref.clone();
    let mut conn = state.conn().await?;
    let (row, created) = conn
        .transaction::<_, ApiError, _>(|c| {
            async move {
                let stored = match uptime_db::refs::find(c, REF_KIND, user.org_id, &given_ref)
                    .await?
                {
                    None => None,
                    // Held by a window out of the key's reach: a ref
                    // that is not free, as for a create.
                    Some(id) => Some(visible(c, &user, id, true).await.map_err(|e| match e {
                        ApiError::NotFound => crate::refs::taken(REF_KIND, &user),
                        other => other,
                    })?),
                };
                let Some(stored) = stored else {
                    let definition = checked_create(c, &user, body, now, false).await?;
                    if_match.check_absent()?;
                    let row = insert(c, &user, &definition, Some(&given_ref), now).await?;
                    return Ok((row, true));
                };
                let tag = crate::etag::of_json(&shown(stored.clone(), Some(&given_ref), now));
                // The body first (400), then the condition (412).
                let replacement = replacement(c, &user, &stored, body, now, false).await?;
                if_match.check(&tag)?;
                let row = match replacement {
                    None => stored,
                    Some(definition) => {
                        rewrite(c, &user, stored, &given_ref, &definition, now).await?
                    }
                };
                Ok((row, false))
            }
            .scope_boxed()
        })
        .await?;
    let shown = shown(row, Some(&r#ref), now);
    Ok(if created {
        HttpResponse::Created()
            .insert_header((
                actix_web::http::header::LOCATION,
                format!("/api/v1/maintenance-windows/{}", shown.id),
            ))
            .json(shown)
    } else {
        HttpResponse::Ok().json(shown)
    })
}

/// The fields an apply's plan compares, as responses show them.
const COMPARED: &[&str] = &[
    "name",
    "monitor_ids",
    "label_selector",
    "effect",
    "starts_at",
    "ends_at",
    "rrule",
    "timezone",
    "duration_secs",
];

/// What a create body would do to the window with its ref.
pub(crate) enum WindowPlan {
    Create(Box<WindowDefinition>),
    Update {
        stored: Box<MaintenanceWindow>,
        definition: Box<WindowDefinition>,
        changes: Vec<FieldChange>,
    },
    Unchanged(Box<MaintenanceWindow>),
}

impl WindowPlan {
    /// The stored id (updates and unchanged).
    pub(crate) fn id(&self) -> Option<i64> {
        match self {
            WindowPlan::Create(_) => None,
            WindowPlan::Update { stored, .. } | WindowPlan::Unchanged(stored) => Some(stored.id),
        }
    }
}

/// Plans the window `r#ref` of an apply from its resolved spec (a create
/// body), stored as `stored`, exactly as its `PUT .../by-ref/{ref}` would
/// (`placeholders`: see [`checked_create`]).
pub(crate) async fn plan_window(
    c: &mut AsyncPgConnection,
    user: &AuthUser,
    r#ref: &str,
    stored: Option<MaintenanceWindow>,
    spec: serde_json::Value,
    now: DateTime<Utc>,
    placeholders: bool,
) -> Result<WindowPlan, ApiError> {
    let body: CreateWindow =
        serde_json::from_value(spec).map_err(|e| ApiError::invalid_field("spec", e.to_string()))?;
    let Some(stored) = stored else {
        let definition = checked_create(c, user, body, now, placeholders).await?;
        return Ok(WindowPlan::Create(Box::new(definition)));
    };
    Ok(
        match replacement(c, user, &stored, body, now, placeholders).await? {
            None => WindowPlan::Unchanged(Box::new(stored)),
            Some(definition) => {
                let before = audit::shown(&shown(stored.clone(), Some(r#ref), now));
                let after_row = MaintenanceWindow {
                    name: definition.name.clone(),
                    monitor_ids: definition.monitor_ids.clone(),
                    label_selector: definition.label_selector.clone(),
                    effect: definition.effect.clone(),
                    starts_at: definition.starts_at,
                    ends_at: definition.ends_at,
                    rrule: definition.rrule.clone(),
                    timezone: definition.timezone.clone(),
                    duration_secs: definition.duration_secs,
                    last_ends_at: definition.last_ends_at,
                    ..stored.clone()
                };
                let after = audit::shown(&shown(after_row, Some(r#ref), now));
                WindowPlan::Update {
                    changes: crate::apply::changes::diff(&before, &after, COMPARED),
                    stored: Box::new(stored),
                    definition: Box::new(definition),
                }
            }
        },
    )
}

/// Carries out a plan in the caller's transaction; the window's id.
pub(crate) async fn execute_window(
    c: &mut AsyncPgConnection,
    user: &AuthUser,
    r#ref: &str,
    plan: WindowPlan,
    now: DateTime<Utc>,
) -> Result<i64, ApiError> {
    Ok(match plan {
        WindowPlan::Create(definition) => insert(c, user, &definition, Some(r#ref), now).await?.id,
        WindowPlan::Update {
            stored, definition, ..
        } => rewrite(c, user, *stored, r#ref, &definition, now).await?.id,
        WindowPlan::Unchanged(stored) => stored.id,
    })
}
