//! `PUT /api/v1/monitors/by-ref/{ref}`: create or replace the monitor with
//! this ref, from a create body. The same planning ([`plan_one`]) and
//! writes ([`execute`]) serve each monitor of `POST /api/v1/apply`.

use super::alert_rules;
use super::draft::{new_monitor, Creation};
use super::handlers::announce;
use super::replace::{changes_of, replacing};
use super::types::{CreateMonitor, MonitorResponse};
use super::writes::{self, Current, Rewrite, WriteSettings, Written};
use crate::apply::changes::FieldChange;
use crate::auth::AuthUser;
use crate::error::{ApiError, ErrorBody};
use crate::etag::IfMatch;
use crate::resource::ref_param::{MonitorRef, RefPath};
use crate::resource::routes::by_ref;
use crate::state::AppState;
use crate::validation::Problems;
use actix_web::{web, HttpResponse};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection};
use uptime_contracts::MonitorChange;
use uptime_db::alerting::AlertRules;
use uptime_db::refs::RefKind;

/// What a create body would do to the monitor with its ref.
pub(super) enum Planned {
    Create {
        creation: Box<Creation>,
        rules: AlertRules,
    },
    Update {
        current: Box<Current>,
        change: Box<Rewrite>,
        changes: Vec<FieldChange>,
    },
    Unchanged {
        current: Box<Current>,
    },
}

/// What was done.
pub(super) enum Outcome {
    Created(Written),
    Replaced(Written),
    Unchanged(Written),
}

/// Plans `body` for the monitor with `r#ref`, stored as `current` (`None`:
/// there is none): validated exactly as a create body (400 naming every
/// problem), then a create, or a replacement listing what it changes.
/// Reads nothing: the caller loaded `current`.
pub(super) fn plan_one(
    org_id: i64,
    r#ref: &str,
    current: Option<Current>,
    mut body: CreateMonitor,
    settings: &WriteSettings,
) -> Result<Planned, ApiError> {
    let mut problems = Problems::new();
    let rules = alert_rules::created(
        std::mem::take(&mut body.alert_rules),
        settings.floors,
        &mut problems,
    );
    let Some(current) = current else {
        body.reference.ref_ = Some(r#ref.to_string());
        let creation = new_monitor(
            org_id,
            body,
            settings.allow_private,
            &settings.regions,
            settings.keyring.as_deref(),
        )?;
        problems.into_result()?;
        return Ok(Planned::Create {
            creation: Box::new(creation),
            rules,
        });
    };
    body.reference.ref_ = None;
    let mut contact_ids = body.rest.alert_contact_ids.take().unwrap_or_default();
    contact_ids.sort_unstable();
    contact_ids.dedup();
    let draft = replacing(
        &current.row,
        body,
        settings.keyring.as_deref(),
        &mut problems,
    );
    draft.validate(&mut problems, settings.allow_private, &settings.regions);
    problems.into_result()?;
    let changes = changes_of(
        &current,
        &draft,
        &rules,
        &contact_ids,
        Some(r#ref),
        settings,
    )?;
    if changes.is_empty() {
        return Ok(Planned::Unchanged {
            current: Box::new(current),
        });
    }
    Ok(Planned::Update {
        current: Box::new(current),
        change: Box::new(Rewrite {
            draft,
            rules,
            contact_ids: Some(contact_ids),
            r#ref: Some(r#ref.to_string()),
        }),
        changes,
    })
}

/// Carries out a plan in the caller's transaction.
pub(super) async fn execute(
    c: &mut AsyncPgConnection,
    user: &AuthUser,
    planned: Planned,
    settings: &WriteSettings,
) -> Result<Outcome, ApiError> {
    Ok(match planned {
        Planned::Create { creation, rules } => {
            Outcome::Created(writes::insert(c, user, *creation, rules, settings).await?)
        }
        Planned::Update {
            current, change, ..
        } => {
            let written = writes::rewrite(c, user, *current, *change, settings).await?;
            if written.changed {
                Outcome::Replaced(written)
            } else {
                Outcome::Unchanged(written)
            }
        }
        Planned::Unchanged { current } => Outcome::Unchanged(Written {
            row: current.row,
            contact_ids: current.contact_ids,
            r#ref: current.r#ref,
            changed: false,
        }),
    })
}

/// Create or replace the caller's monitor with this ref.
///
/// The body is a create body (`POST /api/v1/monitors`), without `ref` or
/// with the path's. No monitor has the ref: it is created with it (`201`).
/// One has: it is replaced (`200`): every field not given returns to its
/// default, as with a fresh create, except a basic-auth password not
/// restated, which is kept; its id, results and incidents stay. When that
/// changes nothing, nothing is written (the same version, `ETag`, as
/// before). The same validation, quotas, audit entry and rate-limit charge
/// as the create or update it amounts to; `If-Match` is honoured (and fails
/// when there is no monitor to match).
#[utoipa::path(put, path = "/api/v1/monitors/by-ref/{ref}", operation_id = "putMonitorByRef", tag = "monitors", request_body = CreateMonitor,
    security(("bearer" = [])),
    params(MonitorRef),
    responses((status = 200, body = MonitorResponse, description = "replaced, or unchanged"),
        (status = 201, body = MonitorResponse, description = "created with this ref"),
        (status = 400, body = ErrorBody, description = "`invalid request body` naming each field refused; `ref` when the path's is malformed or the body names another"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "quota exceeded, as for a create or an update"),
        (status = 409, body = ErrorBody, description = "the ref is not free (`ref`): another request created a monitor with it meanwhile, or, for a key with a label selector, a monitor out of its reach has it (the message does not say which)"),
        (status = 412, body = ErrorBody, description = "`If-Match` names another version, or no monitor has this ref"),
        (status = 413, body = ErrorBody)))]
pub async fn put_by_ref(
    state: web::Data<AppState>,
    user: AuthUser,
    path: RefPath,
    if_match: crate::etag::IfMatch,
    body: crate::validation::Json<CreateMonitor>,
) -> Result<HttpResponse, ApiError> {
    let r#ref = path.0;
    let mut body = body.into_inner();
    crate::refs::check_path(&r#ref, body.reference.ref_.take())?;
    let settings = WriteSettings::of(&state);
    let mut conn = state.conn().await?;
    let outcome = conn
        .transaction::<_, ApiError, _>(|c| {
            async move {
                let (current, tag) =
                    match uptime_db::refs::find(c, RefKind::Monitor, user.org_id, &r#ref).await? {
                        None => (None, None),
                        Some(id) => {
                            // Held by a monitor out of the key's reach: a
                            // ref that is not free, as for a create.
                            let (current, tag) = Current::load(c, &user, id, &settings.regions)
                                .await?
                                .ok_or_else(|| crate::refs::taken(RefKind::Monitor, &user))?;
                            (Some(current), Some(tag))
                        }
                    };
                // The body first (400), then the condition (412).
                let planned = plan_one(user.org_id, &r#ref, current, body, &settings)?;
                match tag {
                    None => if_match.check_absent()?,
                    Some(tag) => if_match.check(&tag)?,
                }
                execute(c, &user, planned, &settings).await
            }
            .scope_boxed()
        })
        .await?;
    drop(conn);
    let regions = &state.settings.regions;
    Ok(match outcome {
        Outcome::Created(written) => {
            let id = written.row.id;
            announce(&state, id, MonitorChange::Upserted).await;
            HttpResponse::Created()
                .insert_header((
                    actix_web::http::header::LOCATION,
                    format!("/api/v1/monitors/{id}"),
                ))
                .json(written.shown(regions)?)
        }
        Outcome::Replaced(written) => {
            announce(&state, written.row.id, MonitorChange::Upserted).await;
            HttpResponse::Ok().json(written.shown(regions)?)
        }
        Outcome::Unchanged(written) => HttpResponse::Ok().json(written.shown(regions)?),
    })
}

/// Read the caller's monitor with this ref: what `GET /api/v1/monitors/{id}`
/// answers for its id.
#[utoipa::path(get, path = "/api/v1/monitors/by-ref/{ref}", operation_id = "getMonitorByRef", tag = "monitors", security(("bearer" = [])),
    params(MonitorRef),
    responses((status = 200, body = MonitorResponse),
        (status = 400, body = ErrorBody, description = "the ref is malformed (`ref`)"),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "no monitor of the organisation has this ref, or it is out of the key's reach (`ref`)")))]
pub async fn get_monitor_by_ref(
    state: web::Data<AppState>,
    user: AuthUser,
    path: RefPath,
) -> Result<HttpResponse, ApiError> {
    let (kind, reader) = (RefKind::Monitor, user.clone());
    by_ref(&state.clone(), &reader, kind, &path, |id| {
        super::get(state, user, id.into())
    })
    .await
}

/// Delete the caller's monitor with this ref, as
/// `DELETE /api/v1/monitors/{id}` does (`If-Match` honoured, one audit
/// entry).
#[utoipa::path(delete, path = "/api/v1/monitors/by-ref/{ref}", operation_id = "deleteMonitorByRef", tag = "monitors", security(("bearer" = [])),
    params(MonitorRef),
    responses((status = 204),
        (status = 400, body = ErrorBody, description = "the ref is malformed (`ref`)"),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "no monitor of the organisation has this ref, or it is out of the key's reach (`ref`)"),
        (status = 412, body = ErrorBody, description = "`If-Match` names another version")))]
pub async fn delete_monitor_by_ref(
    state: web::Data<AppState>,
    user: AuthUser,
    path: RefPath,
    if_match: IfMatch,
) -> Result<HttpResponse, ApiError> {
    let (kind, reader) = (RefKind::Monitor, user.clone());
    by_ref(&state.clone(), &reader, kind, &path, |id| {
        super::delete(state, user, id.into(), if_match)
    })
    .await
}
