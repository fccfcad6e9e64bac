//! `ref`: the stable, caller-chosen name of a resource (docs/api.md,
//! "Monitoring as code"). Optional, unique per organisation and kind,
//! settable on create and by a PATCH while unset, never changed afterwards:
//! a file, a Kubernetes resource or a provider that manages a resource by
//! its ref must never find it renamed under it.

use crate::auth::AuthUser;
use crate::error::ApiError;
use crate::state::AppState;
use crate::validation::Problems;
use actix_web::HttpResponse;
use diesel_async::AsyncPgConnection;
use uptime_db::refs::{RefError, RefKind};

/// The longest ref.
pub const MAX_REF_CHARS: usize = 255;

/// The syntax, as the OpenAPI document shows it (and migration 000047's
/// CHECK holds it): lowercase letters, digits, `.`, `_`, `-`, alphanumeric
/// at both ends.
pub const REF_PATTERN: &str = "^[a-z0-9]([a-z0-9._-]{0,253}[a-z0-9])?$";

/// Whether `value` is a well-formed ref.
pub fn is_valid(value: &str) -> bool {
    let bytes = value.as_bytes();
    let alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    !bytes.is_empty()
        && bytes.len() <= MAX_REF_CHARS
        && bytes
            .iter()
            .all(|b| alnum(b) || matches!(b, b'.' | b'_' | b'-'))
        && bytes.first().is_some_and(alnum)
        && bytes.last().is_some_and(alnum)
}

/// The message for a malformed ref.
pub const SYNTAX_MESSAGE: &str =
    "1 to 255 of lowercase letters, digits, '.', '_' and '-', starting and ending with a letter or digit";

/// Adds a problem under `field` unless `value` is a well-formed ref.
pub fn check(problems: &mut Problems, field: &str, value: &str) {
    if !is_valid(value) {
        problems.add(field, SYNTAX_MESSAGE);
    }
}

/// Checks the ref of a `PUT .../by-ref/{ref}` path and the body's `ref`,
/// which may only repeat it: 400 naming `ref` otherwise.
pub fn check_path(path_ref: &str, body_ref: Option<String>) -> Result<(), ApiError> {
    if !is_valid(path_ref) {
        return Err(ApiError::invalid_field("ref", SYNTAX_MESSAGE));
    }
    match body_ref {
        Some(given) if given != path_ref => Err(ApiError::invalid_field(
            "ref",
            "must be left out or be the path's ref",
        )),
        _ => Ok(()),
    }
}

/// The 409 for a ref another resource of the organisation and kind has.
///
/// A ref is unique in the organisation, so a key with a label selector may
/// give one that a resource out of its reach holds. It gets the same
/// answer whatever holds the ref (a resource it reaches or one it does
/// not): a ref that is not free, which does not say what has it, so the
/// answer confirms nothing the key could not otherwise see.
pub fn taken(kind: RefKind, user: &AuthUser) -> ApiError {
    let message = if user.label_selector.is_some() {
        format!(
            "this {} ref is not free in the organisation; choose another (a key limited by \
             labels is not told what has it)",
            noun(kind)
        )
    } else {
        format!("another {} of the organisation has this ref", noun(kind))
    };
    ApiError::ConflictOn {
        field: "ref",
        message,
    }
}

/// The 404 for a ref no resource of the organisation and kind carries.
pub fn not_found(kind: RefKind, r#ref: &str) -> ApiError {
    ApiError::NotFoundOn {
        field: "ref",
        message: format!(
            "no {} of the organisation has the ref '{}'",
            noun(kind),
            r#ref
        ),
    }
}

/// The id of the organisation's resource of `kind` with the path's ref, for
/// `GET`/`DELETE .../by-ref/{ref}`: `400` naming `ref` when it is malformed,
/// `404` naming it when nothing has it. A ref never moves to another row,
/// so the id route called next answers for the same resource (or `404`
/// when it was deleted in between, which [`naming_ref`] turns into this
/// ref's `404`).
pub async fn resolve(
    state: &AppState,
    org_id: i64,
    kind: RefKind,
    r#ref: &str,
) -> Result<i64, ApiError> {
    if !is_valid(r#ref) {
        return Err(ApiError::invalid_field("ref", SYNTAX_MESSAGE));
    }
    let mut conn = state.conn().await?;
    uptime_db::refs::find(&mut conn, kind, org_id, r#ref)
        .await?
        .ok_or_else(|| not_found(kind, r#ref))
}

/// The id route's answer for the resource with the ref, its `404` (gone
/// meanwhile, or beyond a label-limited key's reach) naming the ref.
pub fn naming_ref(
    answer: Result<HttpResponse, ApiError>,
    kind: RefKind,
    r#ref: &str,
) -> Result<HttpResponse, ApiError> {
    answer.map_err(|error| match error {
        ApiError::NotFound => not_found(kind, r#ref),
        other => other,
    })
}

/// What the kind is called in messages.
pub fn noun(kind: RefKind) -> &'static str {
    match kind {
        RefKind::Monitor => "monitor",
        RefKind::AlertContact => "alert contact",
        RefKind::MaintenanceWindow => "maintenance window",
        RefKind::StatusPage => "status page",
        RefKind::EscalationPolicy => "escalation policy",
    }
}

/// [`RefError`] as the API answers it.
pub fn from_db(kind: RefKind, user: &AuthUser, error: RefError) -> ApiError {
    match error {
        RefError::Taken => taken(kind, user),
        RefError::Db(e) => e.into(),
    }
}

/// Gives a new row the ref of its create request, if any (syntax checked
/// with the rest of the body). A taken ref is a 409; the caller's
/// transaction then rolls the row back.
pub async fn set_on_create(
    c: &mut AsyncPgConnection,
    kind: RefKind,
    user: &AuthUser,
    id: i64,
    given: Option<&str>,
) -> Result<(), ApiError> {
    let Some(given) = given else {
        return Ok(());
    };
    if uptime_db::refs::find(c, kind, user.org_id, given)
        .await?
        .is_some()
    {
        return Err(taken(kind, user));
    }
    uptime_db::refs::set(c, kind, user.org_id, id, given)
        .await
        .map_err(|e| from_db(kind, user, e))
}

/// The ref after a PATCH's `ref` (absent `None`, `null` `Some(None)`):
/// a row without one takes the given one; repeating the stored one (or
/// `null` on a row without one) changes nothing; anything else is a 400
/// naming `ref`, because a set ref is immutable.
pub fn patched(
    stored: Option<&str>,
    given: Option<Option<String>>,
    problems: &mut Problems,
) -> Option<String> {
    match (stored, given) {
        (stored, None) => stored.map(str::to_string),
        (None, Some(None)) => None,
        (None, Some(Some(new))) => {
            check(problems, "ref", &new);
            Some(new)
        }
        (Some(stored), Some(Some(new))) if new == stored => Some(new),
        (Some(stored), Some(_)) => {
            problems.add("ref", "cannot be changed or removed once set");
            Some(stored.to_string())
        }
    }
}

/// Writes the ref a PATCH gave a row that had none (after [`patched`]).
pub async fn set_if_new(
    c: &mut AsyncPgConnection,
    kind: RefKind,
    user: &AuthUser,
    id: i64,
    stored: Option<&str>,
    after: Option<&str>,
) -> Result<(), ApiError> {
    match (stored, after) {
        (None, Some(new)) => set_on_create(c, kind, user, id, Some(new)).await,
        _ => Ok(()),
    }
}

/// Declares a body struct of a kind with a ref, its `ref` field last, as
/// every such kind's bodies have it; the field's doc comment, which names
/// the kind, follows the struct. `create ref`: optional and checked for
/// syntax by the OpenAPI document too; `update ref`: a PATCH's (left out
/// kept apart from `null`, see [`patched`]); `shown ref`: a response's,
/// with `with_ref`.
macro_rules! with_ref {
    ($(#[$m:meta])* pub struct $name:ident { $($fields:tt)* } $(#[$rm:meta])* create ref) => {
        $(#[$m])*
        pub struct $name {
            $($fields)*
            $(#[$rm])*
            #[serde(default, rename = "ref")]
            #[schema(
                min_length = 1,
                max_length = 255,
                pattern = "^[a-z0-9]([a-z0-9._-]{0,253}[a-z0-9])?$"
            )]
            pub ref_: Option<String>,
        }
    };
    ($(#[$m:meta])* pub struct $name:ident { $($fields:tt)* } $(#[$rm:meta])* update ref) => {
        $(#[$m])*
        pub struct $name {
            $($fields)*
            $(#[$rm])*
            #[serde(
                default,
                rename = "ref",
                deserialize_with = "crate::validation::double_option"
            )]
            #[schema(value_type = Option<String>, required = false, min_length = 1, max_length = 255, pattern = "^[a-z0-9]([a-z0-9._-]{0,253}[a-z0-9])?$")]
            pub ref_: Option<Option<String>>,
        }
    };
    ($(#[$m:meta])* pub struct $name:ident { $($fields:tt)* } $(#[$rm:meta])* shown ref) => {
        $(#[$m])*
        pub struct $name {
            $($fields)*
            $(#[$rm])*
            #[serde(rename = "ref")]
            pub ref_: Option<String>,
        }

        impl $name {
            /// The response with the resource's ref (read beside the row:
            /// `uptime_db::refs`).
            pub fn with_ref(mut self, r#ref: Option<String>) -> Self {
                self.ref_ = r#ref;
                self
            }
        }
    };
}
pub(crate) use with_ref;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_syntax_is_lowercase_alphanumeric_at_both_ends() {
        for good in ["a", "payments-api", "team.svc_1", "0", &"a".repeat(255)] {
            assert!(is_valid(good), "{good}");
        }
        for bad in [
            "",
            "-a",
            "a-",
            "A",
            "a b",
            "a/b",
            ".a",
            "é",
            &"a".repeat(256),
        ] {
            assert!(!is_valid(bad), "{bad}");
        }
    }

    #[test]
    fn a_set_ref_is_immutable() {
        let mut problems = Problems::new();
        assert_eq!(patched(Some("a"), None, &mut problems), Some("a".into()));
        assert_eq!(
            patched(Some("a"), Some(Some("a".into())), &mut problems),
            Some("a".into())
        );
        assert_eq!(patched(None, Some(None), &mut problems), None);
        assert_eq!(
            patched(None, Some(Some("b".into())), &mut problems),
            Some("b".into())
        );
        assert!(problems.is_empty());
        patched(Some("a"), Some(Some("b".into())), &mut problems);
        assert!(!problems.is_empty());
        let mut problems = Problems::new();
        patched(Some("a"), Some(None), &mut problems);
        assert!(!problems.is_empty());
    }
}
