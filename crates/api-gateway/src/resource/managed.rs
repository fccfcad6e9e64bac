//! The kinds an apply walks, as objects: each [`Resource`]'s managed rows
//! ([`Managed`]) and its planned writes ([`PlannedWrite`]), so the apply
//! plans, writes and prunes every kind through one loop (the monitors,
//! written in dependency order and in bulk, are planned and written
//! through [`Managed::plan_of`] and `execute` by the walk itself).

use super::{body_of, execute, plan, Plan, Resource};
use crate::apply::changes::FieldChange;
use crate::apply::request::{Action, Kind};
use crate::auth::AuthUser;
use crate::error::ApiError;
use crate::state::AppState;
use diesel_async::AsyncPgConnection;
use futures::future::BoxFuture;
use serde_json::Value;
use std::collections::HashMap;

/// One desired resource, planned.
pub trait PlannedWrite: Send + Sync {
    /// The plan entry's action, stored id and changes.
    fn entry(&self) -> (Action, Option<i64>, Option<Vec<FieldChange>>);

    /// Carries it out in the caller's transaction; the resource's id.
    fn execute<'a>(
        self: Box<Self>,
        c: &'a mut AsyncPgConnection,
        state: &'a AppState,
        user: &'a AuthUser,
        r#ref: &'a str,
    ) -> BoxFuture<'a, Result<i64, ApiError>>;
}

impl<K: Resource> PlannedWrite for Plan<K> {
    fn entry(&self) -> (Action, Option<i64>, Option<Vec<FieldChange>>) {
        Plan::entry(self)
    }

    fn execute<'a>(
        self: Box<Self>,
        c: &'a mut AsyncPgConnection,
        state: &'a AppState,
        user: &'a AuthUser,
        r#ref: &'a str,
    ) -> BoxFuture<'a, Result<i64, ApiError>> {
        Box::pin(async move {
            let done = execute::<K>(c, state, user, r#ref, *self, true).await?;
            Ok(K::id(&done.row))
        })
    }
}

/// A kind's resources an apply manages (those that carry a ref).
pub trait ManagedKind: Send + Sync {
    fn kind(&self) -> Kind;

    /// `(ref, id)` of each.
    fn stored(&self) -> Vec<(String, i64)>;

    /// Plans the resource `r#ref` from its resolved spec (a create body).
    #[allow(clippy::too_many_arguments)]
    fn plan<'a>(
        &'a self,
        c: &'a mut AsyncPgConnection,
        state: &'a AppState,
        user: &'a AuthUser,
        r#ref: &'a str,
        spec: Value,
        placeholders: bool,
    ) -> BoxFuture<'a, Result<Box<dyn PlannedWrite>, ApiError>>;

    /// Deletes the managed resource `r#ref` (its audit entry).
    fn prune<'a>(
        &'a self,
        c: &'a mut AsyncPgConnection,
        state: &'a AppState,
        user: &'a AuthUser,
        r#ref: &'a str,
    ) -> BoxFuture<'a, Result<(), ApiError>>;
}

/// The managed resources of `K`, by ref, locked until the transaction
/// ends.
pub struct Managed<K: Resource>(HashMap<String, K::Stored>);

impl<K: Resource> Managed<K> {
    pub async fn load(
        c: &mut AsyncPgConnection,
        user: &AuthUser,
    ) -> Result<Box<dyn ManagedKind>, ApiError> {
        Ok(Box::new(Self::of(c, user).await?))
    }

    /// As [`Managed::load`], for a caller that plans `K` itself.
    pub async fn of(c: &mut AsyncPgConnection, user: &AuthUser) -> Result<Self, ApiError> {
        let rows = K::managed(c, user).await?;
        Ok(Self(rows.into_iter().collect()))
    }

    /// The id of the managed resource `r#ref`.
    pub fn id_of(&self, r#ref: &str) -> Option<i64> {
        self.0.get(r#ref).map(K::id)
    }

    /// Plans the resource `r#ref` from its resolved spec (a create body).
    pub async fn plan_of(
        &self,
        c: &mut AsyncPgConnection,
        state: &AppState,
        user: &AuthUser,
        r#ref: &str,
        spec: Value,
        placeholders: bool,
    ) -> Result<Plan<K>, ApiError> {
        let body = body_of::<K>(spec)?;
        let stored = self.0.get(r#ref).cloned();
        plan::<K>(c, state, user, r#ref, stored, body, placeholders).await
    }
}

impl<K: Resource> ManagedKind for Managed<K> {
    fn kind(&self) -> Kind {
        K::KIND
    }

    fn stored(&self) -> Vec<(String, i64)> {
        self.0
            .iter()
            .map(|(r, row)| (r.clone(), K::id(row)))
            .collect()
    }

    fn plan<'a>(
        &'a self,
        c: &'a mut AsyncPgConnection,
        state: &'a AppState,
        user: &'a AuthUser,
        r#ref: &'a str,
        spec: Value,
        placeholders: bool,
    ) -> BoxFuture<'a, Result<Box<dyn PlannedWrite>, ApiError>> {
        Box::pin(async move {
            let planned = self
                .plan_of(c, state, user, r#ref, spec, placeholders)
                .await?;
            Ok(Box::new(planned) as Box<dyn PlannedWrite>)
        })
    }

    fn prune<'a>(
        &'a self,
        c: &'a mut AsyncPgConnection,
        state: &'a AppState,
        user: &'a AuthUser,
        r#ref: &'a str,
    ) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async move {
            let stored = self.0.get(r#ref).ok_or_else(|| {
                ApiError::Internal(format!(
                    "{} {:?} to delete not loaded",
                    K::KIND.as_str(),
                    r#ref
                ))
            })?;
            K::remove(c, state, user, stored, Some(r#ref)).await
        })
    }
}
