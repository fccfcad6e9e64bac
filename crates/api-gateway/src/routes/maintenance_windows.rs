//! `/api/v1/maintenance-windows`: create, list, read, update and delete the
//! organisation's maintenance windows. The recorder's maintenance sweep
//! applies them (docs/architecture.md, maintenance windows): a change takes
//! effect within its interval, and deleting or editing an open window ends
//! its occurrence then (what it held is released).
//!
//! A key with a label selector manages only windows within its reach
//! (`crate::reach`): each monitor id one it reaches, the label selector at
//! least as narrow as its own. Other windows are another organisation's to
//! it.

mod body;
mod resource;
mod schedule;

pub use body::{
    CreateWindow, Effect, Occurrence, UpdateWindow, WindowList, WindowResponse, MAX_WINDOWS_PER_ORG,
};
pub use resource::*;

use crate::api::table::{routes, Routes};
use crate::audit;
use crate::auth::AuthUser;
use crate::error::{ApiError, ErrorBody};
use crate::reach::Named;
use crate::state::AppState;
use crate::validation::Problems;
use actix_web::{web, HttpResponse};
use body::{Scheduled, MAX_NAME_CHARS};
use chrono::Utc;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection};
use uptime_db::maintenance::{self as db, MaintenanceWindow, WindowDefinition};
use uptime_db::refs::RefKind;

const AUDIT_KIND: &str = audit::kind::MAINTENANCE_WINDOW;
const REF_KIND: RefKind = RefKind::MaintenanceWindow;

pub fn routes() -> Routes {
    routes![list: READ,
        create: WRITE,
        // Before `/maintenance-windows/{id}` (which takes no sub-path today,
        // but a longer path first keeps it so).
        get_window_by_ref: READ,
        put_window_by_ref: WRITE,
        delete_window_by_ref: WRITE,
        get: READ,
        update: WRITE,
        delete: WRITE,]
}

/// 403 unless the window's selector (if any) selects only monitors the
/// caller reaches; its ids were checked, each must name a monitor the
/// caller reaches (400 otherwise, as for one that does not exist).
fn check_selector(user: &AuthUser, selector: Option<&serde_json::Value>) -> Result<(), ApiError> {
    if selector.is_some_and(|s| !user.holds_selector(s)) {
        return Err(outside_reach());
    }
    Ok(())
}

/// Checks that every id names a monitor the caller reaches.
async fn check_monitors(
    conn: &mut AsyncPgConnection,
    user: &AuthUser,
    problems: &mut Problems,
    ids: &[i64],
) -> Result<(), ApiError> {
    for id in ids {
        if uptime_db::monitors::get_within(conn, user.reach(), *id)
            .await?
            .is_none()
        {
            problems.add("monitor_ids", format!("monitor {id} does not exist"));
        }
    }
    Ok(())
}

/// Create a maintenance window. One-off (`starts_at`, `ends_at`), ad hoc
/// (`duration_minutes`, from now unless `starts_at` is given: one call for a
/// deploy script) or recurring (`rrule`, `timezone`, `duration_secs`).
#[utoipa::path(post, path = "/api/v1/maintenance-windows", operation_id = "createMaintenanceWindow", tag = "maintenance-windows", request_body = CreateWindow,
    responses((status = 201, body = WindowResponse), (status = 403, body = ErrorBody, description = "the organisation has 200 windows, or a key limited by labels gives a selector outside its own (a monitor id out of its reach is the 400 of one that does not exist)")))]
pub async fn create(
    state: web::Data<AppState>,
    user: AuthUser,
    body: crate::validation::Json<CreateWindow>,
) -> Result<HttpResponse, ApiError> {
    let req = body.into_inner();
    let now = Utc::now();
    let r#ref = req.ref_.clone();
    let mut conn = state.conn().await?;
    let definition = checked_create(&mut conn, &user, req, now, false).await?;
    let given_ref = r#ref.clone();
    let row = conn
        .transaction::<_, ApiError, _>(|c| {
            async move { insert(c, &user, &definition, given_ref.as_deref(), now).await }
                .scope_boxed()
        })
        .await?;
    Ok(crate::http::response::created(
        format!("/api/v1/maintenance-windows/{}", row.id),
        WindowResponse::of(row, now).with_ref(r#ref),
    ))
}

/// The definition a create body makes, checked as a create is: `400`
/// naming every problem (the ref's syntax among them), `403` beyond a
/// label-limited key's reach. `PUT .../by-ref/{ref}` replaces a window with
/// the same. With `placeholders` (an apply's plan before anything is
/// written), negative ids stand for monitors the apply creates and are not
/// looked up; the apply checks the window again with their real ids before
/// writing it.
async fn checked_create(
    conn: &mut AsyncPgConnection,
    user: &AuthUser,
    req: CreateWindow,
    now: chrono::DateTime<Utc>,
    placeholders: bool,
) -> Result<WindowDefinition, ApiError> {
    let mut problems = Problems::new();
    problems.check_len("name", &req.name, MAX_NAME_CHARS);
    if let Some(r#ref) = &req.ref_ {
        crate::refs::check(&mut problems, "ref", r#ref);
    }
    let (given, pending): (Vec<i64>, Vec<i64>) = req
        .monitor_ids
        .iter()
        .copied()
        .partition(|id| !placeholders || *id > 0);
    let existing = body::monitor_ids(&mut problems, given);
    let mut ids = existing.clone();
    ids.extend(pending);
    ids.sort_unstable();
    ids.dedup();
    let selector = body::selector(&mut problems, req.label_selector.clone());
    if ids.is_empty() && selector.is_none() {
        problems.add("monitor_ids", "give monitor_ids, a label_selector, or both");
    }
    let effect = body::effect(&mut problems, req.effect.as_deref());
    let scheduled = body::schedule(&mut problems, &req.when(), now);
    check_monitors(conn, user, &mut problems, &existing).await?;
    problems.into_result()?;
    let Some(scheduled) = scheduled else {
        return Err(ApiError::Internal("a schedule without problems".into()));
    };
    check_selector(user, selector.as_ref())?;
    Ok(scheduled.definition(
        req.name.trim().to_string(),
        ids,
        selector,
        effect.unwrap_or(Effect::Silence),
    ))
}

/// Inserts a window (within the organisation's bound) with its ref, and
/// its audit entry, in the caller's transaction.
async fn insert(
    c: &mut AsyncPgConnection,
    user: &AuthUser,
    definition: &WindowDefinition,
    r#ref: Option<&str>,
    now: chrono::DateTime<Utc>,
) -> Result<MaintenanceWindow, ApiError> {
    if db::count(c, user.org_id).await? >= MAX_WINDOWS_PER_ORG {
        return Err(ApiError::Forbidden {
            field: "maintenance_windows",
            message: format!(
                "an organisation keeps at most {MAX_WINDOWS_PER_ORG} maintenance windows"
            ),
        });
    }
    let row = db::create(c, user.org_id, definition).await?;
    crate::refs::set_on_create(c, REF_KIND, user, row.id, r#ref).await?;
    let shown = audit::shown(&shown(row.clone(), r#ref, now));
    audit::record(
        c,
        user,
        audit::action::CREATE,
        AUDIT_KIND,
        Some(row.id),
        audit::changes(None, Some(&shown)),
    )
    .await?;
    Ok(row)
}

/// The window as answered, with its ref.
fn shown(
    row: MaintenanceWindow,
    r#ref: Option<&str>,
    now: chrono::DateTime<Utc>,
) -> WindowResponse {
    WindowResponse::of(row, now).with_ref(r#ref.map(str::to_string))
}

/// The stored definition of `row`, as [`checked_create`] makes one.
fn stored_definition(row: &MaintenanceWindow) -> WindowDefinition {
    let effect = if row.effect == "pause" {
        Effect::Pause
    } else {
        Effect::Silence
    };
    Scheduled::of(row).definition(
        row.name.clone(),
        row.monitor_ids.clone(),
        row.label_selector.clone(),
        effect,
    )
}

fn outside_reach() -> ApiError {
    ApiError::Forbidden {
        field: "label_selector",
        message: "a key limited by labels manages only windows whose label_selector holds its own"
            .into(),
    }
}

async fn visible(
    conn: &mut AsyncPgConnection,
    user: &AuthUser,
    id: i64,
    for_update: bool,
) -> Result<MaintenanceWindow, ApiError> {
    let row = if for_update {
        db::get_for_update(conn, user.org_id, id).await?
    } else {
        db::get(conn, user.org_id, id).await?
    };
    let row = row.ok_or(ApiError::NotFound)?;
    let named = Named::window(&row.monitor_ids, row.label_selector.as_ref());
    if !crate::reach::covers(conn, user, &named).await? {
        return Err(ApiError::NotFound);
    }
    Ok(row)
}

/// Change a maintenance window. Schedule fields given replace the schedule
/// whole (as in a create); an open occurrence the new schedule does not
/// keep open ends at the recorder's next sweep.
#[utoipa::path(patch, path = "/api/v1/maintenance-windows/{id}", operation_id = "updateMaintenanceWindow", tag = "maintenance-windows", request_body = UpdateWindow,
    params(("id" = i64, Path, description = "Maintenance window id")),
    responses((status = 200, body = WindowResponse), (status = 403, body = ErrorBody)))]
pub async fn update(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<i64>,
    body: crate::validation::Json<UpdateWindow>,
) -> Result<HttpResponse, ApiError> {
    let req = body.into_inner();
    let id = id.into_inner();
    let now = Utc::now();
    let mut conn = state.conn().await?;
    let row = conn
        .transaction::<_, ApiError, _>(|c| {
            async move {
                let stored = visible(c, &user, id, true).await?;
                let stored_ref = uptime_db::refs::of_one(c, REF_KIND, id).await?;
                let (definition, r#ref) =
                    merged(c, &user, &stored, stored_ref.as_deref(), req, now).await?;
                let before = audit::shown(&shown(stored.clone(), stored_ref.as_deref(), now));
                let (stored_ref, new_ref) = (stored_ref.as_deref(), r#ref.as_deref());
                let definition = &definition;
                // The closure below runs inside `audit::update`, which borrows `user` too.
                let who = &user;
                let written = audit::update(c, &user, AUDIT_KIND, Some(id), &before, move |c| {
                    async move {
                        let row = db::update(c, user.org_id, id, definition)
                            .await?
                            .ok_or(ApiError::NotFound)?;
                        crate::refs::set_if_new(c, REF_KIND, who, id, stored_ref, new_ref).await?;
                        let after = audit::shown(&shown(row.clone(), new_ref, now));
                        Ok((row, after))
                    }
                    .scope_boxed()
                })
                .await?;
                // Nothing changed: nothing was written.
                Ok((written.unwrap_or(stored), r#ref))
            }
            .scope_boxed()
        })
        .await?;
    let (row, r#ref) = row;
    Ok(HttpResponse::Ok().json(WindowResponse::of(row, now).with_ref(r#ref)))
}

/// `stored` with `req` applied, checked as a create is, and the ref after
/// it (a `400` naming `ref` when it would change a set one).
async fn merged(
    conn: &mut AsyncPgConnection,
    user: &AuthUser,
    stored: &MaintenanceWindow,
    stored_ref: Option<&str>,
    req: UpdateWindow,
    now: chrono::DateTime<Utc>,
) -> Result<(WindowDefinition, Option<String>), ApiError> {
    let mut problems = Problems::new();
    let r#ref = crate::refs::patched(stored_ref, req.ref_.clone(), &mut problems);
    let name = match &req.name {
        Some(name) => {
            problems.check_len("name", name, MAX_NAME_CHARS);
            name.trim().to_string()
        }
        None => stored.name.clone(),
    };
    let ids = match req.monitor_ids.clone() {
        Some(ids) => body::monitor_ids(&mut problems, ids),
        None => stored.monitor_ids.clone(),
    };
    let selector = match req.label_selector.clone() {
        Some(given) => body::selector(&mut problems, given),
        None => stored.label_selector.clone(),
    };
    if ids.is_empty() && selector.is_none() {
        problems.add("monitor_ids", "give monitor_ids, a label_selector, or both");
    }
    let effect = body::effect(&mut problems, req.effect.as_deref());
    let when = req.when();
    let scheduled = if body::changes_schedule(&when) {
        body::schedule(&mut problems, &when, now)
    } else {
        Some(Scheduled::of(stored))
    };
    if req.monitor_ids.is_some() {
        check_monitors(conn, user, &mut problems, &ids).await?;
    }
    problems.into_result()?;
    let Some(scheduled) = scheduled else {
        return Err(ApiError::Internal("a schedule without problems".into()));
    };
    check_selector(user, selector.as_ref())?;
    let effect = effect.unwrap_or(if stored.effect == "pause" {
        Effect::Pause
    } else {
        Effect::Silence
    });
    Ok((scheduled.definition(name, ids, selector, effect), r#ref))
}

/// Deletes the window `stored` (with its ref) and records it, in the
/// caller's transaction (an apply's prune uses it too).
pub(crate) async fn remove(
    c: &mut AsyncPgConnection,
    user: &AuthUser,
    stored: MaintenanceWindow,
    r#ref: Option<&str>,
) -> Result<(), ApiError> {
    let id = stored.id;
    let before = audit::shown(&shown(stored, r#ref, Utc::now()));
    if !db::delete(c, user.org_id, id).await? {
        return Err(ApiError::NotFound);
    }
    audit::record(
        c,
        user,
        audit::action::DELETE,
        AUDIT_KIND,
        Some(id),
        audit::changes(Some(&before), None),
    )
    .await
}
