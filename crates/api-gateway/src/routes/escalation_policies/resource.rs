//! Escalation policies as a [`Resource`]: `PUT`, `GET` and `DELETE` by
//! ref, `GET`/`DELETE` by id, the list, and each policy of an apply, all
//! through `crate::resource`.

use super::{
    check_contacts, checked_create, insert, remove, shown, CreatePolicy, PolicyList, PolicyResponse,
};
use crate::apply::changes::FieldChange;
use crate::apply::request::Kind;
use crate::auth::AuthUser;
use crate::error::{ApiError, ErrorBody};
use crate::resource::ref_param::PolicyRef;
use crate::resource::routes::handler;
use crate::resource::{Listed, Resource};
use crate::state::AppState;
use crate::validation::PageQuery;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::AsyncPgConnection;
use uptime_db::escalation_policies::{self as db, Policy, PolicyDefinition};
use uptime_db::refs::RefKind;

pub struct Policies;

/// The fields an apply's plan compares, as responses show them.
const COMPARED: &[&str] = &["name", "steps", "repeat_count"];

/// The stored definition of `policy`, as [`checked_create`] makes one.
fn stored_definition(policy: &Policy) -> PolicyDefinition {
    PolicyDefinition {
        name: policy.name.clone(),
        repeat_count: policy.repeat_count,
        steps: policy.steps.clone(),
    }
}

impl Resource for Policies {
    const REF_KIND: RefKind = RefKind::EscalationPolicy;
    const KIND: Kind = Kind::EscalationPolicy;
    const PATH: &'static str = "/api/v1/escalation-policies";
    type Create = CreatePolicy;
    type Stored = Policy;
    type Checked = PolicyDefinition;
    type Shown = PolicyResponse;
    type Extra = ();

    fn id(stored: &Policy) -> i64 {
        stored.id
    }

    fn take_ref(body: &mut CreatePolicy) -> Option<String> {
        body.ref_.take()
    }

    fn shown(
        _: &AppState,
        stored: &Policy,
        r#ref: Option<&str>,
    ) -> Result<PolicyResponse, ApiError> {
        Ok(PolicyResponse::from(stored.clone()).with_ref(r#ref.map(str::to_string)))
    }

    async fn get(
        c: &mut AsyncPgConnection,
        user: &AuthUser,
        id: i64,
        lock: bool,
    ) -> Result<Policy, ApiError> {
        db::get(c, user.org_id, id, lock)
            .await?
            .ok_or(ApiError::NotFound)
    }

    /// Reads nothing: the contacts are checked when the policy is written.
    async fn check(
        _: &mut AsyncPgConnection,
        state: &AppState,
        _: &AuthUser,
        _: &str,
        body: CreatePolicy,
        _: Option<&Policy>,
        _: bool,
    ) -> Result<PolicyDefinition, ApiError> {
        checked_create(&body, state.settings.escalation.min_delay_secs)
    }

    fn compare(
        _: &AppState,
        stored: &Policy,
        def: &PolicyDefinition,
        r#ref: &str,
    ) -> Result<Option<Vec<FieldChange>>, ApiError> {
        if stored_definition(stored) == *def {
            return Ok(None);
        }
        let after = Policy {
            name: def.name.clone(),
            repeat_count: def.repeat_count,
            steps: def.steps.clone(),
            ..stored.clone()
        };
        Ok(Some(crate::apply::changes::diff(
            &shown(stored, Some(r#ref)),
            &shown(&after, Some(r#ref)),
            COMPARED,
        )))
    }

    async fn insert(
        c: &mut AsyncPgConnection,
        _: &AppState,
        user: &AuthUser,
        def: &PolicyDefinition,
        r#ref: &str,
        _: bool,
    ) -> Result<(Policy, ()), ApiError> {
        Ok((insert(c, user, def, Some(r#ref)).await?, ()))
    }

    /// Incidents escalating through it follow the new steps from their
    /// next step on, as after a `PATCH`.
    async fn rewrite(
        c: &mut AsyncPgConnection,
        _: &AppState,
        user: &AuthUser,
        stored: &Policy,
        def: &PolicyDefinition,
        r#ref: &str,
        _: bool,
    ) -> Result<(Policy, ()), ApiError> {
        check_contacts(c, user.org_id, def).await?;
        let id = stored.id;
        let before = shown(stored, Some(r#ref));
        let written = crate::audit::update(
            c,
            user,
            crate::audit::kind::ESCALATION_POLICY,
            Some(id),
            &before,
            move |c| {
                async move {
                    let policy = db::replace(c, user.org_id, id, def)
                        .await?
                        .ok_or(ApiError::NotFound)?;
                    let after = shown(&policy, Some(r#ref));
                    Ok((policy, after))
                }
                .scope_boxed()
            },
        )
        .await?;
        Ok((written.unwrap_or_else(|| stored.clone()), ()))
    }

    async fn remove(
        c: &mut AsyncPgConnection,
        _: &AppState,
        user: &AuthUser,
        stored: &Policy,
        r#ref: Option<&str>,
    ) -> Result<(), ApiError> {
        remove(c, user, stored, r#ref).await
    }
}

impl Listed for Policies {
    type List = PolicyList;

    fn list(escalation_policies: Vec<PolicyResponse>, next_cursor: Option<String>) -> PolicyList {
        PolicyList {
            escalation_policies,
            next_cursor,
        }
    }

    async fn page(
        c: &mut AsyncPgConnection,
        user: &AuthUser,
        after_id: i64,
        limit: i64,
    ) -> Result<Vec<Policy>, ApiError> {
        Ok(db::list_page(c, user.org_id, after_id, limit).await?)
    }
}

handler!(list Policies,
/// List the organisation's escalation policies in id order, a page at a time.
#[utoipa::path(get, path = "/api/v1/escalation-policies", operation_id = "listEscalationPolicies", tag = "escalation-policies",
    params(PageQuery), responses((status = 200, body = PolicyList)))]
list
);

handler!(get Policies,
/// Read one escalation policy.
#[utoipa::path(get, path = "/api/v1/escalation-policies/{id}", operation_id = "getEscalationPolicy", tag = "escalation-policies",
    params(("id" = i64, Path, description = "Escalation policy id", minimum = 1)),
    responses((status = 200, body = PolicyResponse)))]
get
);

handler!(delete Policies,
/// Delete an escalation policy no monitor uses.
#[utoipa::path(delete, path = "/api/v1/escalation-policies/{id}", operation_id = "deleteEscalationPolicy", tag = "escalation-policies",
    params(("id" = i64, Path, description = "Escalation policy id", minimum = 1)),
    responses((status = 204), (status = 403, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "monitors alert through it (`details` field `monitor_ids` names up to 20)")))]
delete
);

handler!(get_by_ref Policies,
/// Read the organisation's escalation policy with this ref: what
/// `GET /api/v1/escalation-policies/{id}` answers for its id.
#[utoipa::path(get, path = "/api/v1/escalation-policies/by-ref/{ref}", operation_id = "getEscalationPolicyByRef", tag = "escalation-policies",
    params(PolicyRef), responses((status = 200, body = PolicyResponse),
        (status = 404, body = ErrorBody, description = "no policy of the organisation has this ref (`ref`)")))]
get_policy_by_ref
);

handler!(delete_by_ref Policies,
/// Delete the organisation's escalation policy with this ref, as
/// `DELETE /api/v1/escalation-policies/{id}` does (one audit entry; a policy in use is not deleted).
#[utoipa::path(delete, path = "/api/v1/escalation-policies/by-ref/{ref}", operation_id = "deleteEscalationPolicyByRef", tag = "escalation-policies",
    params(PolicyRef), responses((status = 204),
        (status = 404, body = ErrorBody, description = "no policy of the organisation has this ref (`ref`)"),
        (status = 409, body = ErrorBody, description = "monitors alert through it (`monitor_ids`)")))]
delete_policy_by_ref
);

handler!(put_by_ref Policies,
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
    params(PolicyRef),
    responses((status = 200, body = PolicyResponse, description = "replaced, or unchanged"),
        (status = 201, body = PolicyResponse, description = "created with this ref"),
        (status = 400, body = ErrorBody, description = "`invalid request body` naming each field refused (e.g. `steps[1].delay_secs`, a contact that is not the organisation's); `ref` when the path's is malformed or the body names another"),
        (status = 403, body = ErrorBody, description = "the organisation has 100 policies (`escalation_policies`), or the key may not write"),
        (status = 409, body = ErrorBody, description = "another request created a policy with this ref meanwhile (`ref`)"),
        (status = 412, body = ErrorBody, description = "`If-Match` names another version, or no policy has this ref")))]
put_policy_by_ref
);
