//! The request and response bodies of `/api/v1/monitors`, as the OpenAPI
//! document shows them: flat objects made of groups of fields
//! ([`super::fields`]): the fields every monitor has ([`super::common`]),
//! each kind's ([`super::kinds`]) and the placement ([`super::placement`]).

use super::common::{CreateFirst, CreateRest, ShownFirst, ShownRest, UpdateFirst, UpdateRest};
use super::fields;
use super::kinds::{self, dns, heartbeat, http, keyword, tls, KindsShown};
use super::{alert_rules, labels, placement, reference};
use crate::error::ApiError;
use serde::{Deserialize, Deserializer, Serialize};
use std::sync::LazyLock;
use uptime_db::models::Monitor;
use utoipa::openapi::schema::Schema;
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

/// The OpenAPI schema of a flat body made of field groups, in the body's
/// order: one object with every group's properties (`closed`: a request
/// body), and every group's component schemas.
macro_rules! flat_body_schema {
    ($body:ty, $description:expr, $closed:expr, [$($group:ty),+ $(,)?]) => {
        impl PartialSchema for $body {
            fn schema() -> RefOr<Schema> {
                fields::object_of($description, $closed, [$(<$group>::schema()),+])
            }
        }

        impl ToSchema for $body {
            fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
                $(<$group>::schemas(schemas);)+
            }
        }
    };
}

/// A flat request body: its fields' names (`$names`, the groups' in the
/// body's order, for the error naming an unknown field), its reading
/// ([`fields::read_closed`] around the derived `Deserialize`, which
/// `#[serde(remote = "Self")]` makes an inherent function) and its schema.
macro_rules! flat_request_body {
    ($body:ident, $names:ident, $description:expr, every_element: $every:expr,
     [$($group:ty),+ $(,)?]) => {
        pub(super) static $names: LazyLock<Vec<&'static str>> =
            LazyLock::new(|| [$(fields::names_of::<$group>()),+].concat());

        impl<'de> Deserialize<'de> for $body {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                fields::read_closed(deserializer, stringify!($body), &$names, $every, |value| {
                    $body::deserialize(value)
                })
            }
        }

        flat_body_schema!($body, $description, true, [$($group),+]);
    };
}

/// A new monitor: the groups of fields its request body holds side by
/// side (serde's and utoipa's view is one flat object; see
/// [`super::fields`]).
#[derive(Debug, Deserialize)]
#[serde(remote = "Self")]
pub struct CreateMonitor {
    #[serde(flatten)]
    pub first: CreateFirst,
    #[serde(flatten)]
    pub rest: CreateRest,
    #[serde(flatten)]
    pub kinds: kinds::Given,
    #[serde(flatten)]
    pub placement: placement::Create,
    #[serde(flatten)]
    pub labels: labels::Create,
    #[serde(flatten)]
    pub alert_rules: alert_rules::Create,
    #[serde(flatten)]
    pub reference: reference::Create,
}

flat_request_body!(
    CreateMonitor,
    CREATE_NAMES,
    "A new monitor. Only `name` and `type` are required (and `target` for\n\
every type but heartbeat, `keyword` for keyword monitors); the rest have\n\
defaults. Options of another type than the monitor's (e.g. `headers` on a\n\
tcp monitor) are refused.",
    every_element: true,
    [
        CreateFirst,
        keyword::Create,
        CreateRest,
        http::Create,
        dns::Create,
        tls::Create,
        heartbeat::Create,
        placement::Create,
        labels::Create,
        alert_rules::Create,
        reference::Create,
    ]
);

/// A partial update: the groups of fields of its body (one flat object).
#[derive(Debug, Default, Deserialize)]
#[serde(remote = "Self")]
pub struct UpdateMonitor {
    #[serde(flatten)]
    pub first: UpdateFirst,
    #[serde(flatten)]
    pub rest: UpdateRest,
    #[serde(flatten)]
    pub kinds: kinds::Patch,
    #[serde(flatten)]
    pub placement: placement::Update,
    #[serde(flatten)]
    pub labels: labels::Update,
    #[serde(flatten)]
    pub alert_rules: alert_rules::Update,
    #[serde(flatten)]
    pub reference: reference::Update,
}

flat_request_body!(
    UpdateMonitor,
    UPDATE_NAMES,
    "A partial update: fields left out keep their value. See the field\n\
descriptions of the create request for the bounds.",
    every_element: false,
    [
        UpdateFirst,
        keyword::Update,
        UpdateRest,
        http::Update,
        dns::Update,
        tls::Update,
        heartbeat::Update,
        placement::Update,
        labels::Update,
        alert_rules::Update,
        reference::Update,
    ]
);

/// A flat response body: the struct flattening its groups, in the body's
/// order, and its schema.
macro_rules! flat_response_body {
    ($(#[$m:meta])* $body:ident, $description:expr, { $($field:ident: $group:ty),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Serialize)]
        pub struct $body {
            $(#[serde(flatten)] pub $field: $group,)+
        }

        flat_body_schema!($body, $description, false, [$($group),+]);
    };
}

flat_response_body!(
    /// A monitor, with its definition and its runtime state: the groups of
    /// fields of one flat object.
    MonitorResponse,
    "A monitor, with its definition and its runtime state.",
    {
        first: ShownFirst,
        keyword: keyword::Shown,
        rest: ShownRest,
        http: http::Shown,
        dns: dns::Shown,
        tls: tls::Shown,
        heartbeat: heartbeat::Shown,
        placement: placement::Shown,
        labels: labels::Shown,
        alert_rules: alert_rules::Shown,
        reference: reference::Shown,
    }
);

impl MonitorResponse {
    pub(super) fn from_row(
        m: Monitor,
        alert_contact_ids: Vec<i64>,
        regions: &uptime_config::RegionsSettings,
    ) -> Result<Self, ApiError> {
        let kinds = KindsShown::of(&m, chrono::Utc::now())?;
        let alert_rules = alert_rules::Shown::of(&m);
        let placement = placement::shown(m.kind, m.regions.as_deref(), m.quorum, regions);
        let (first, rest) = super::common::shown(&m, alert_contact_ids);
        Ok(Self {
            first,
            keyword: kinds.keyword,
            rest,
            http: kinds.http,
            dns: kinds.dns,
            tls: kinds.tls,
            heartbeat: kinds.heartbeat,
            placement,
            labels: labels::Shown {
                labels: uptime_labels::Labels::from_json(&m.labels),
            },
            alert_rules,
            reference: reference::Shown::default(),
        })
    }

    /// The response with the monitor's ref (read beside the row:
    /// `uptime_db::refs`).
    pub(super) fn with_ref(mut self, r#ref: Option<String>) -> Self {
        self.reference.ref_ = r#ref;
        self
    }
}

/// One page of monitors.
#[derive(Debug, Serialize, ToSchema)]
pub struct MonitorList {
    pub monitors: Vec<MonitorResponse>,
    /// Pass as `?cursor=` for the next page; `null` on the last page.
    pub next_cursor: Option<String>,
}

#[cfg(test)]
#[path = "types_tests.rs"]
mod tests;
