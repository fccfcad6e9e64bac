//! Escalation policies as a [`Resource`]: `PUT`, `GET` and `DELETE` by
//! ref, `GET`/`DELETE` by id, the list, and each policy of an apply, all
//! through `crate::resource`.

use super::{
    checked_create, insert, remove, replace, shown, CreatePolicy, PolicyList, PolicyResponse,
};
use crate::apply::changes::FieldChange;
use crate::auth::AuthUser;
use crate::error::{ApiError, ErrorBody};
use crate::resource::ref_param::PolicyRef;
use crate::resource::routes::kind_routes;
use crate::resource::{resource_kind, Listed, Resource};
use crate::state::AppState;
use diesel_async::AsyncPgConnection;
use uptime_db::escalation_policies::{self as db, Policy, PolicyDefinition};

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
    resource_kind!(EscalationPolicy at "/api/v1/escalation-policies");
    type Create = CreatePolicy;
    type Stored = Policy;
    type Checked = PolicyDefinition;
    type Shown = PolicyResponse;
    type Extra = ();

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
        let written = replace(c, user, stored, def, Some(r#ref), Some(r#ref)).await?;
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

kind_routes! {
    Policies at "/api/v1/escalation-policies", tag "escalation-policies", PolicyRef,
    shows PolicyResponse, creates CreatePolicy;
    id "Escalation policy id", minimum 1;
    no_ref "no policy of the organisation has this ref (`ref`)";

    /// Read one escalation policy.
    get "getEscalationPolicy" => get;

    /// Delete an escalation policy no monitor uses.
    delete "deleteEscalationPolicy" => delete, (status = 403, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "monitors alert through it (`details` field `monitor_ids` names up to 20)");

    /// Read the organisation's escalation policy with this ref: what
    /// `GET /api/v1/escalation-policies/{id}` answers for its id.
    get_by_ref "getEscalationPolicyByRef" => get_policy_by_ref;

    /// Delete the organisation's escalation policy with this ref, as
    /// `DELETE /api/v1/escalation-policies/{id}` does (one audit entry; a policy in use is not deleted).
    delete_by_ref "deleteEscalationPolicyByRef" => delete_policy_by_ref,
        (status = 409, body = ErrorBody, description = "monitors alert through it (`monitor_ids`)");

    /// Create or replace the organisation's escalation policy with this ref.
    ///
    /// The body is a create body (`POST /api/v1/escalation-policies`), without
    /// `ref` or with the path's, checked as a create is. No policy has the ref:
    /// it is created with it (`201`). One has: it is replaced (`200`), a
    /// `repeat_count` not given back at 0, its id (and the monitors pointing at
    /// it) kept. When that changes nothing, nothing is written (the same
    /// `ETag` as before). `If-Match` is honoured (and fails when there is no
    /// policy).
    put_by_ref "putEscalationPolicyByRef" => put_policy_by_ref,
        bad "`invalid request body` naming each field refused (e.g. `steps[1].delay_secs`, a contact that is not the organisation's); `ref` when the path's is malformed or the body names another",
        forbidden "the organisation has 100 policies (`escalation_policies`), or the key may not write",
        conflict "another request created a policy with this ref meanwhile (`ref`)";

    /// List the organisation's escalation policies in id order, a page at a time.
    list "listEscalationPolicies" => list, PolicyList;
}
