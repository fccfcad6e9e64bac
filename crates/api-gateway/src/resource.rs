//! The lifecycle every kind that carries a ref shares, written once: a
//! kind implements [`Resource`] (its create, stored and shown shapes, its
//! validation, insert, rewrite, read and delete) and gets from here
//!
//! - [`routes`]: `GET`/`DELETE` by id and by ref, `PUT .../by-ref/{ref}`
//!   (create or replace, `If-Match`, nothing written when nothing changes,
//!   so the same `ETag`), and the keyset list ([`Listed`]);
//! - [`plan`] and [`execute`]: what a create body does to the resource with
//!   its ref (create, update with the changed fields, unchanged), the one
//!   planning both the `PUT` and each resource of `POST /api/v1/apply`
//!   ([`managed`] walks the kinds for it);
//! - [`ref_param`]: the `{ref}` path parameter as the OpenAPI document
//!   shows it, its pattern stated once (`crate::refs::REF_PATTERN`).
//!
//! The kind keeps what is its own: its audit entries (`crate::audit`,
//! secrets compared as `"[changed]"`), its scoping (a read beyond a
//! label-limited key's reach is a `404`, `crate::reach`) and its quota.
//! The rate charge and idempotency are the middleware's.

pub mod managed;
pub mod ref_param;
pub mod routes;

use crate::apply::changes::FieldChange;
use crate::apply::request::{Action, Kind};
use crate::auth::AuthUser;
use crate::error::ApiError;
use crate::state::AppState;
use diesel_async::AsyncPgConnection;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::future::Future;
use uptime_db::refs::RefKind;

/// A kind of resource that carries a ref.
///
/// Each method runs in the caller's transaction where it takes a
/// connection. `insert`, `rewrite` and `remove` write the kind's audit
/// entry with the row.
pub trait Resource: Sized + Send + Sync + 'static {
    /// Its refs' table.
    const REF_KIND: RefKind;
    /// Its name in an apply.
    const KIND: Kind;
    /// Its collection, `/api/v1/...` (a created one's `Location` is
    /// `{PATH}/{id}`).
    const PATH: &'static str;

    /// Its create body (the body of `PUT .../by-ref/{ref}` and an apply's
    /// spec too).
    type Create: DeserializeOwned + Send + 'static;
    /// Its row as read for update.
    type Stored: Clone + Send + Sync + 'static;
    /// A create body checked: what a write stores.
    type Checked: Send + Sync + 'static;
    /// Its response body.
    type Shown: Serialize + Send;
    /// What a write hands back beside the row for the answer (a new
    /// access token, a verification due).
    type Extra: Send + Default + 'static;

    fn id(stored: &Self::Stored) -> i64;

    /// Takes the body's `ref` out (a `PUT` may only repeat the path's).
    fn take_ref(body: &mut Self::Create) -> Option<String>;

    /// The resource as answered (its `ETag` is this JSON's).
    fn shown(
        state: &AppState,
        stored: &Self::Stored,
        r#ref: Option<&str>,
    ) -> Result<Self::Shown, ApiError>;

    /// The organisation's resource `id`, if the key reaches it (`404`
    /// otherwise), locked with `lock`.
    fn get(
        c: &mut AsyncPgConnection,
        user: &AuthUser,
        id: i64,
        lock: bool,
    ) -> impl Future<Output = Result<Self::Stored, ApiError>> + Send;

    /// `body` checked as a create is (`400` naming every problem) for the
    /// resource with `r#ref`, stored as `stored`. With `placeholders` (an
    /// apply's plan before anything is written), negative ids stand for
    /// resources the apply creates and are not looked up.
    fn check(
        c: &mut AsyncPgConnection,
        state: &AppState,
        user: &AuthUser,
        r#ref: &str,
        body: Self::Create,
        stored: Option<&Self::Stored>,
        placeholders: bool,
    ) -> impl Future<Output = Result<Self::Checked, ApiError>> + Send;

    /// What writing `checked` over `stored` changes, as responses show it;
    /// `None` when it would leave it as it is (nothing is then written).
    fn compare(
        state: &AppState,
        stored: &Self::Stored,
        checked: &Self::Checked,
        r#ref: &str,
    ) -> Result<Option<Vec<FieldChange>>, ApiError>;

    /// Inserts the resource with `r#ref` (its quota checked here unless
    /// `in_apply`, whose end state is checked whole).
    fn insert(
        c: &mut AsyncPgConnection,
        state: &AppState,
        user: &AuthUser,
        checked: &Self::Checked,
        r#ref: &str,
        in_apply: bool,
    ) -> impl Future<Output = Result<(Self::Stored, Self::Extra), ApiError>> + Send;

    /// Writes `checked` over `stored` (its quota checked here unless
    /// `in_apply`, as for [`Resource::insert`]).
    fn rewrite(
        c: &mut AsyncPgConnection,
        state: &AppState,
        user: &AuthUser,
        stored: &Self::Stored,
        checked: &Self::Checked,
        r#ref: &str,
        in_apply: bool,
    ) -> impl Future<Output = Result<(Self::Stored, Self::Extra), ApiError>> + Send;

    /// Deletes `stored` (with its ref).
    fn remove(
        c: &mut AsyncPgConnection,
        state: &AppState,
        user: &AuthUser,
        stored: &Self::Stored,
        r#ref: Option<&str>,
    ) -> impl Future<Output = Result<(), ApiError>> + Send;

    /// What follows a `DELETE` of resource `id` once committed (telling
    /// another service).
    fn removed(state: &AppState, id: i64) -> impl Future<Output = ()> + Send {
        let _ = (state, id);
        std::future::ready(())
    }

    /// The answer of a `PUT .../by-ref/{ref}` once committed.
    fn answered(
        state: &AppState,
        row: Self::Stored,
        r#ref: &str,
        _extra: Self::Extra,
        _created: bool,
    ) -> impl Future<Output = Result<Self::Shown, ApiError>> {
        std::future::ready(Self::shown(state, &row, Some(r#ref)))
    }

    /// The organisation's resources that carry a ref, by ref, locked: what
    /// an apply manages.
    fn managed(
        c: &mut AsyncPgConnection,
        user: &AuthUser,
    ) -> impl Future<Output = Result<Vec<(String, Self::Stored)>, ApiError>> + Send {
        async move {
            let mut rows = Vec::new();
            for (id, r#ref) in uptime_db::refs::all(c, Self::REF_KIND, user.org_id).await? {
                match Self::get(c, user, id, true).await {
                    Ok(row) => rows.push((r#ref, row)),
                    Err(ApiError::NotFound) => {}
                    Err(other) => return Err(other),
                }
            }
            Ok(rows)
        }
    }
}

/// A kind whose collection lists in id order with keyset cursors.
pub trait Listed: Resource {
    /// The list's body.
    type List: Serialize;

    fn list(items: Vec<Self::Shown>, next_cursor: Option<String>) -> Self::List;

    /// Up to `limit` of the organisation's rows after `after_id`, by id.
    fn page(
        c: &mut AsyncPgConnection,
        user: &AuthUser,
        after_id: i64,
        limit: i64,
    ) -> impl Future<Output = Result<Vec<Self::Stored>, ApiError>> + Send;

    /// The rows of a page the key reaches (all of them unless the kind
    /// is scoped by labels).
    fn reached(
        c: &mut AsyncPgConnection,
        user: &AuthUser,
        rows: Vec<Self::Stored>,
    ) -> impl Future<Output = Result<Vec<Self::Stored>, ApiError>> + Send {
        let _ = (c, user);
        std::future::ready(Ok(rows))
    }
}

/// The part of a [`Resource`] impl that only names the kind: `REF_KIND`
/// and `KIND` (the variants of `RefKind` and `Kind` share its name),
/// `PATH`, and `id` and `take_ref`, which read the stored row's `id` and
/// the create body's `ref_` (`id row.id, ref reference.ref_` where they
/// sit deeper).
macro_rules! resource_kind {
    ($variant:ident at $path:literal) => {
        $crate::resource::resource_kind!($variant at $path, id id, ref ref_);
    };
    ($variant:ident at $path:literal, id $($id:ident).+, ref $($ref_:ident).+) => {
        const REF_KIND: uptime_db::refs::RefKind = uptime_db::refs::RefKind::$variant;
        const KIND: $crate::apply::request::Kind = $crate::apply::request::Kind::$variant;
        const PATH: &'static str = $path;

        fn id(stored: &Self::Stored) -> i64 {
            stored.$($id).+
        }

        fn take_ref(body: &mut Self::Create) -> Option<String> {
            body.$($ref_).+.take()
        }
    };
}
pub(crate) use resource_kind;

/// What a create body does to the resource with its ref.
pub enum Plan<K: Resource> {
    Create(K::Checked),
    Update {
        stored: K::Stored,
        checked: K::Checked,
        changes: Vec<FieldChange>,
    },
    Unchanged(K::Stored),
}

impl<K: Resource> Plan<K> {
    /// The plan entry's action, stored id and changes.
    pub fn entry(&self) -> (Action, Option<i64>, Option<Vec<FieldChange>>) {
        match self {
            Plan::Create(_) => (Action::Create, None, None),
            Plan::Update {
                stored, changes, ..
            } => (Action::Update, Some(K::id(stored)), Some(changes.clone())),
            Plan::Unchanged(stored) => (Action::Unchanged, Some(K::id(stored)), None),
        }
    }

    /// The stored resource it starts from (`None`: a create).
    pub fn stored(&self) -> Option<&K::Stored> {
        match self {
            Plan::Create(_) => None,
            Plan::Update { stored, .. } | Plan::Unchanged(stored) => Some(stored),
        }
    }
}

/// Plans `body` for the resource `r#ref`, stored as `stored`: checked
/// ([`Resource::check`]), then a create, a replacement with what it
/// changes, or nothing.
pub async fn plan<K: Resource>(
    c: &mut AsyncPgConnection,
    state: &AppState,
    user: &AuthUser,
    r#ref: &str,
    stored: Option<K::Stored>,
    body: K::Create,
    placeholders: bool,
) -> Result<Plan<K>, ApiError> {
    let checked = K::check(c, state, user, r#ref, body, stored.as_ref(), placeholders).await?;
    let Some(stored) = stored else {
        return Ok(Plan::Create(checked));
    };
    Ok(match K::compare(state, &stored, &checked, r#ref)? {
        None => Plan::Unchanged(stored),
        Some(changes) => Plan::Update {
            stored,
            checked,
            changes,
        },
    })
}

/// What [`execute`] did.
pub struct Executed<K: Resource> {
    pub row: K::Stored,
    pub created: bool,
    pub extra: K::Extra,
}

/// Carries out a plan in the caller's transaction.
pub async fn execute<K: Resource>(
    c: &mut AsyncPgConnection,
    state: &AppState,
    user: &AuthUser,
    r#ref: &str,
    plan: Plan<K>,
    in_apply: bool,
) -> Result<Executed<K>, ApiError> {
    Ok(match plan {
        Plan::Create(checked) => {
            let (row, extra) = K::insert(c, state, user, &checked, r#ref, in_apply).await?;
            Executed {
                row,
                created: true,
                extra,
            }
        }
        Plan::Update {
            stored, checked, ..
        } => {
            let (row, extra) =
                K::rewrite(c, state, user, &stored, &checked, r#ref, in_apply).await?;
            Executed {
                row,
                created: false,
                extra,
            }
        }
        Plan::Unchanged(row) => Executed {
            row,
            created: false,
            extra: K::Extra::default(),
        },
    })
}

/// An apply's spec as the kind's create body.
pub fn body_of<K: Resource>(spec: serde_json::Value) -> Result<K::Create, ApiError> {
    serde_json::from_value(spec).map_err(|e| ApiError::invalid_field("spec", e.to_string()))
}
