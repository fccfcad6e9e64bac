//! `/api/v1/escalation-policies`: an organisation's escalation policies
//! (ordered steps of contacts, each with a delay, and a repeat count), and
//! `/api/v1/monitors/{id}/escalation-policy`: the policy a monitor alerts
//! through. A monitor points at a policy or at contacts directly, never
//! both: setting a policy on a monitor with `alert_contact_ids` is a 400
//! naming `escalation_policy_id`, and giving contacts to a monitor with a
//! policy a 400 naming `alert_contact_ids`. A policy in use cannot be
//! deleted (409 naming the monitors). Every write is one audit entry in its
//! transaction. How incidents move through the steps: docs/architecture.md
//! (Escalation).

mod body;
pub mod monitor_link;
mod resource;

use crate::api::table::{routes, Routes};
pub use body::{
    CreatePolicy, MonitorPolicyBody, PolicyList, PolicyResponse, StepBody, UpdatePolicy,
};
pub(crate) use monitor_link::ensure_no_policy;
pub use resource::*;

use crate::audit;
use crate::auth::AuthUser;
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;
use crate::validation::Problems;
use actix_web::{web, HttpResponse};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection};
use uptime_db::escalation_policies::{self as db, PolicyDefinition};
use uptime_db::refs::RefKind;

const REF_KIND: RefKind = RefKind::EscalationPolicy;

pub fn routes() -> Routes {
    routes![list: READ,
        create: WRITE,
        // Before `/escalation-policies/{id}`.
        get_policy_by_ref: READ,
        put_policy_by_ref: WRITE,
        delete_policy_by_ref: WRITE,
        get: READ,
        update: WRITE,
        delete: WRITE,
    ]
    .then(monitor_link::routes())
}

/// 400 naming `steps[i].contact_ids` for contacts that are not the
/// organisation's; locks those found until the transaction ends.
async fn check_contacts(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    def: &PolicyDefinition,
) -> Result<(), ApiError> {
    let mut all: Vec<i64> = def
        .steps
        .iter()
        .flat_map(|s| s.contact_ids.clone())
        .collect();
    all.sort_unstable();
    all.dedup();
    let owned = uptime_db::contacts::owned_ids_locked(conn, org_id, &all).await?;
    let mut problems = Problems::new();
    for (i, step) in def.steps.iter().enumerate() {
        let unknown: Vec<String> = step
            .contact_ids
            .iter()
            .filter(|id| !owned.contains(id))
            .map(|id| id.to_string())
            .collect();
        if !unknown.is_empty() {
            problems.add(
                &format!("steps[{i}].contact_ids"),
                format!("no such alert contact: {}", unknown.join(", ")),
            );
        }
    }
    problems.into_result()
}

fn shown(policy: &db::Policy, r#ref: Option<&str>) -> serde_json::Value {
    audit::shown(&PolicyResponse::from(policy.clone()).with_ref(r#ref.map(str::to_string)))
}

/// The definition a create body makes, every bound checked (`400` naming
/// each problem, the ref's syntax among them); the contacts are checked
/// against the database by [`insert`] and the replacement.
fn checked_create(req: &CreatePolicy, min_delay_secs: u32) -> Result<PolicyDefinition, ApiError> {
    let mut problems = Problems::new();
    if let Some(r#ref) = &req.ref_ {
        crate::refs::check(&mut problems, "ref", r#ref);
    }
    let def = body::definition(
        &mut problems,
        &req.name,
        &req.steps,
        req.repeat_count.unwrap_or(0),
        min_delay_secs,
    );
    problems.into_result()?;
    Ok(def)
}

/// Inserts a policy (within the organisation's bound, its contacts the
/// organisation's) with its ref, and its audit entry, in the caller's
/// transaction.
async fn insert(
    c: &mut AsyncPgConnection,
    user: &AuthUser,
    def: &PolicyDefinition,
    r#ref: Option<&str>,
) -> Result<db::Policy, ApiError> {
    if db::count_locked(c, user.org_id).await? >= MAX_POLICIES_PER_ORGANISATION {
        return Err(ApiError::Forbidden {
            field: "escalation_policies",
            message: format!(
                "an organisation has at most {MAX_POLICIES_PER_ORGANISATION} escalation policies"
            ),
        });
    }
    check_contacts(c, user.org_id, def).await?;
    let policy = db::create(c, user.org_id, def).await?;
    crate::refs::set_on_create(c, REF_KIND, user, policy.id, r#ref).await?;
    audit::record(
        c,
        user,
        audit::action::CREATE,
        audit::kind::ESCALATION_POLICY,
        Some(policy.id),
        audit::changes(None, Some(&shown(&policy, r#ref))),
    )
    .await?;
    Ok(policy)
}

/// Policies an organisation may have (a bound on the table's growth).
pub const MAX_POLICIES_PER_ORGANISATION: i64 = 100;

/// Create an escalation policy (at most 100 per organisation).
#[utoipa::path(post, path = "/api/v1/escalation-policies", operation_id = "createEscalationPolicy", tag = "escalation-policies", request_body = CreatePolicy,
    responses((status = 201, body = PolicyResponse), (status = 400, body = ErrorBody, description = "a bound broken, or a contact that is not the organisation's (the field named, e.g. `steps[1].delay_secs`)"), (status = 403, body = ErrorBody, description = "the organisation has 100 policies (`details` field `escalation_policies`), or the key may not write")))]
pub async fn create(
    state: web::Data<AppState>,
    user: AuthUser,
    body: crate::validation::Json<CreatePolicy>,
) -> Result<HttpResponse, ApiError> {
    let req = body.into_inner();
    let def = checked_create(&req, state.settings.escalation.min_delay_secs)?;
    let r#ref = req.ref_;
    let given_ref = r#ref.clone();
    let mut conn = state.conn().await?;
    let policy = conn
        .transaction::<_, ApiError, _>(|c| {
            async move { insert(c, &user, &def, given_ref.as_deref()).await }.scope_boxed()
        })
        .await?;
    Ok(HttpResponse::Created()
        .insert_header((
            actix_web::http::header::LOCATION,
            format!("/api/v1/escalation-policies/{}", policy.id),
        ))
        .json(PolicyResponse::from(policy).with_ref(r#ref)))
}

/// Change an escalation policy: the fields given replace the stored ones
/// (`steps` as a whole). Incidents escalating through it follow the new
/// steps from their next step on.
#[utoipa::path(patch, path = "/api/v1/escalation-policies/{id}", operation_id = "updateEscalationPolicy", tag = "escalation-policies", request_body = UpdatePolicy,
    params(("id" = i64, Path, description = "Escalation policy id", minimum = 1)),
    responses((status = 200, body = PolicyResponse), (status = 403, body = ErrorBody)))]
pub async fn update(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<i64>,
    body: crate::validation::Json<UpdatePolicy>,
) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    let patch = body.into_inner();
    let min_delay = state.settings.escalation.min_delay_secs;
    let mut conn = state.conn().await?;
    let policy = conn
        .transaction::<_, ApiError, _>(|c| {
            async move {
                let stored = db::get(c, user.org_id, id, true)
                    .await?
                    .ok_or(ApiError::NotFound)?;
                let stored_ref = uptime_db::refs::of_one(c, REF_KIND, id).await?;
                let steps = patch
                    .steps
                    .unwrap_or_else(|| PolicyResponse::from(stored.clone()).steps);
                let mut problems = Problems::new();
                let r#ref = crate::refs::patched(stored_ref.as_deref(), patch.ref_, &mut problems);
                let def = body::definition(
                    &mut problems,
                    patch.name.as_deref().unwrap_or(&stored.name),
                    &steps,
                    patch.repeat_count.unwrap_or(stored.repeat_count),
                    min_delay,
                );
                problems.into_result()?;
                let written = replace(
                    c,
                    &user,
                    &stored,
                    &def,
                    stored_ref.as_deref(),
                    r#ref.as_deref(),
                )
                .await?;
                // Nothing changed: nothing was written.
                Ok((written.unwrap_or(stored), r#ref))
            }
            .scope_boxed()
        })
        .await?;
    let (policy, r#ref) = policy;
    Ok(HttpResponse::Ok().json(PolicyResponse::from(policy).with_ref(r#ref)))
}

/// Writes `def` over the policy `stored` (locked by the caller; its
/// contacts checked here) with its audit entry, in the caller's
/// transaction, the ref `new_ref` set if `stored_ref` was none (a `PATCH`
/// and a `PUT .../by-ref/{ref}` alike); `None` when nothing changed
/// (nothing is then written).
pub(crate) async fn replace(
    c: &mut AsyncPgConnection,
    user: &AuthUser,
    stored: &db::Policy,
    def: &PolicyDefinition,
    stored_ref: Option<&str>,
    new_ref: Option<&str>,
) -> Result<Option<db::Policy>, ApiError> {
    check_contacts(c, user.org_id, def).await?;
    let id = stored.id;
    let before = shown(stored, stored_ref);
    audit::update(
        c,
        user,
        audit::kind::ESCALATION_POLICY,
        Some(id),
        &before,
        move |c| {
            async move {
                let policy = db::replace(c, user.org_id, id, def)
                    .await?
                    .ok_or(ApiError::NotFound)?;
                crate::refs::set_if_new(c, REF_KIND, user, id, stored_ref, new_ref).await?;
                let after = shown(&policy, new_ref);
                Ok((policy, after))
            }
            .scope_boxed()
        },
    )
    .await
}

/// How many of the monitors using a policy a 409 names.
const MONITORS_NAMED: i64 = 20;

/// Deletes the policy `stored` (locked by the caller; with its ref) unless
/// monitors alert through it (409 naming them), and records it, in the
/// caller's transaction (an apply's prune uses it too).
pub(crate) async fn remove(
    c: &mut AsyncPgConnection,
    user: &AuthUser,
    stored: &db::Policy,
    r#ref: Option<&str>,
) -> Result<(), ApiError> {
    let id = stored.id;
    let users = db::monitors_using(c, id, MONITORS_NAMED).await?;
    if !users.is_empty() {
        let named: Vec<String> = users.iter().map(|m| m.to_string()).collect();
        return Err(ApiError::ConflictOn {
            field: "monitor_ids",
            message: format!(
                "monitors alert through this policy: {}; point them elsewhere first",
                named.join(", ")
            ),
        });
    }
    db::delete(c, user.org_id, id).await?;
    audit::record(
        c,
        user,
        audit::action::DELETE,
        audit::kind::ESCALATION_POLICY,
        Some(id),
        audit::changes(Some(&shown(stored, r#ref)), None),
    )
    .await
}
