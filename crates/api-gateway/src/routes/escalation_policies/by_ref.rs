//! `PUT /api/v1/escalation-policies/by-ref/{ref}`: create or replace the
//! policy with this ref, from a create body checked exactly as a create is
//! ([`super::checked_create`], [`super::insert`]).

use super::{
    check_contacts, checked_create, insert, shown, CreatePolicy, PolicyResponse, REF_KIND,
};
use crate::apply::changes::FieldChange;
use crate::audit;
use crate::auth::AuthUser;
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;
use actix_web::{web, HttpResponse};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection};
use uptime_db::escalation_policies::{self as db, Policy, PolicyDefinition};

/// The stored definition of `policy`, as [`checked_create`] makes one.
fn stored_definition(policy: &Policy) -> PolicyDefinition {
    PolicyDefinition {
        name: policy.name.clone(),
        repeat_count: policy.repeat_count,
        steps: policy.steps.clone(),
    }
}

/// Writes `def` over the policy `stored` (with its ref), and its audit
/// entry, in the caller's transaction. Incidents escalating through it
/// follow the new steps from their next step on, as after a `PATCH`.
async fn rewrite(
    c: &mut AsyncPgConnection,
    user: &AuthUser,
    stored: &Policy,
    r#ref: &str,
    def: &PolicyDefinition,
) -> Result<Policy, ApiError> {
    check_contacts(c, user.org_id, def).await?;
    let policy = db::replace(c, user.org_id, stored.id, def)
        .await?
        .ok_or(ApiError::NotFound)?;
    audit::record(
        c,
        user,
        audit::action::UPDATE,
        audit::kind::ESCALATION_POLICY,
        Some(stored.id),
        audit::changes(
            Some(&shown(stored, Some(r#ref))),
            Some(&shown(&policy, Some(r#ref))),
        ),
    )
    .await?;
    Ok(policy)
}

/// Create or replace the organisation's escalation policy with this ref.
///
/// The body is a create body (`POST /api/v1/escalation-policies`), without
/// `ref` or with the path's, checked as a create is. No policy has the ref:
/// it is created with it (`201`). One has: it is replaced (`200`), a
/// `repeat_count` not given back at 0, its id (and the monitors pointing at
/// it) kept. When that changes nothing, nothing is written (the same
/// `ETag` as before). `If-Match` is honoured (and fails when there is no
/// policy).
#[utoipa::path(put, path = "/api/v1/escalation-policies/by-ref/{ref}", operation_id = "putEscalationPolicyByRef", tag = "escalation-policies", request_body = CreatePolicy,
    security(("bearer" = [])),
    params(("ref" = String, Path, description = "The policy's ref: 1 to 255 of lowercase letters, digits, `.`, `_`, `-`, alphanumeric at both ends", min_length = 1, max_length = 255, pattern = "^[a-z0-9]([a-z0-9._-]{0,253}[a-z0-9])?$")),
    responses((status = 200, body = PolicyResponse, description = "replaced, or unchanged"),
        (status = 201, body = PolicyResponse, description = "created with this ref"),
        (status = 400, body = ErrorBody, description = "`invalid request body` naming each field refused (e.g. `steps[1].delay_secs`, a contact that is not the organisation's); `ref` when the path's is malformed or the body names another"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "the organisation has 100 policies (`escalation_policies`), or the key may not write"),
        (status = 409, body = ErrorBody, description = "another request created a policy with this ref meanwhile (`ref`)"),
        (status = 412, body = ErrorBody, description = "`If-Match` names another version, or no policy has this ref"),
        (status = 413, body = ErrorBody)))]
pub async fn put_policy_by_ref(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<String>,
    if_match: crate::etag::IfMatch,
    body: crate::validation::Json<CreatePolicy>,
) -> Result<HttpResponse, ApiError> {
    let r#ref = path.into_inner();
    let mut body = body.into_inner();
    crate::refs::check_path(&r#ref, body.ref_.take())?;
    // The body first (400), then the condition (412).
    let def = checked_create(&body, state.settings.escalation.min_delay_secs)?;
    let given_ref = r#ref.clone();
    let mut conn = state.conn().await?;
    let (policy, created) = conn
        .transaction::<_, ApiError, _>(|c| {
            async move {
                let stored =
                    match uptime_db::refs::find(c, REF_KIND, user.org_id, &given_ref).await? {
                        None => None,
                        Some(id) => db::get(c, user.org_id, id, true).await?,
                    };
                let Some(stored) = stored else {
                    if_match.check_absent()?;
                    let policy = insert(c, &user, &def, Some(&given_ref)).await?;
                    return Ok((policy, true));
                };
                let shown = PolicyResponse::from(stored.clone()).with_ref(Some(given_ref.clone()));
                if_match.check(&crate::etag::of_json(&shown))?;
                if stored_definition(&stored) == def {
                    return Ok((stored, false));
                }
                let policy = rewrite(c, &user, &stored, &given_ref, &def).await?;
                Ok((policy, false))
            }
            .scope_boxed()
        })
        .await?;
    let shown = PolicyResponse::from(policy).with_ref(Some(r#ref));
    Ok(if created {
        HttpResponse::Created()
            .insert_header((
                actix_web::http::header::LOCATION,
                format!("/api/v1/escalation-policies/{}", shown.id),
            ))
            .json(shown)
    } else {
        HttpResponse::Ok().json(shown)
    })
}

/// The fields an apply's plan compares, as responses show them.
const COMPARED: &[&str] = &["name", "steps", "repeat_count"];

/// What a create body would do to the policy with its ref.
pub(crate) enum PolicyPlan {
    Create(PolicyDefinition),
    Update {
        stored: Box<Policy>,
        def: PolicyDefinition,
        changes: Vec<FieldChange>,
    },
    Unchanged(Box<Policy>),
}

impl PolicyPlan {
    /// The stored id (updates and unchanged).
    pub(crate) fn id(&self) -> Option<i64> {
        match self {
            PolicyPlan::Create(_) => None,
            PolicyPlan::Update { stored, .. } | PolicyPlan::Unchanged(stored) => Some(stored.id),
        }
    }
}

/// Plans the policy `r#ref` of an apply from its resolved spec (a create
/// body), stored as `stored`, exactly as its `PUT .../by-ref/{ref}` would.
/// Reads nothing: its contacts are checked when it is written.
pub(crate) fn plan_policy(
    r#ref: &str,
    stored: Option<Policy>,
    spec: serde_json::Value,
    min_delay_secs: u32,
) -> Result<PolicyPlan, ApiError> {
    let body: CreatePolicy =
        serde_json::from_value(spec).map_err(|e| ApiError::invalid_field("spec", e.to_string()))?;
    let def = checked_create(&body, min_delay_secs)?;
    let Some(stored) = stored else {
        return Ok(PolicyPlan::Create(def));
    };
    if stored_definition(&stored) == def {
        return Ok(PolicyPlan::Unchanged(Box::new(stored)));
    }
    let after = Policy {
        name: def.name.clone(),
        repeat_count: def.repeat_count,
        steps: def.steps.clone(),
        ..stored.clone()
    };
    let changes = crate::apply::changes::diff(
        &shown(&stored, Some(r#ref)),
        &shown(&after, Some(r#ref)),
        COMPARED,
    );
    Ok(PolicyPlan::Update {
        stored: Box::new(stored),
        def,
        changes,
    })
}

/// Carries out a plan in the caller's transaction; the policy's id.
pub(crate) async fn execute_policy(
    c: &mut AsyncPgConnection,
    user: &AuthUser,
    r#ref: &str,
    plan: PolicyPlan,
) -> Result<i64, ApiError> {
    Ok(match plan {
        PolicyPlan::Create(def) => insert(c, user, &def, Some(r#ref)).await?.id,
        PolicyPlan::Update { stored, def, .. } => rewrite(c, user, &stored, r#ref, &def).await?.id,
        PolicyPlan::Unchanged(stored) => stored.id,
    })
}
