//! The request and response bodies of `/api/v1/monitors`, as the OpenAPI
//! document shows them: flat objects made of groups of fields
//! ([`super::fields`]): the fields every monitor has ([`super::common`]),
//! each kind's ([`super::kinds`]) and the placement ([`super::placement`]).

use super::common::{
    CreateFirst, CreateRest, ShownFirst, ShownRest, UpdateFirst, UpdateRest, CREATE_FIRST_NAMES,
};
use super::fields::{self, FieldGroup};
use super::kinds::{self, dns, heartbeat, http, keyword, tls, KindsShown};
use super::{alert_rules, labels, placement, reference};
use crate::error::ApiError;
use serde::de::{self, Deserializer, Expected, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use std::fmt;
use uptime_db::models::Monitor;
use utoipa::openapi::schema::Schema;
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

/// `read_entry` and `read_seq` of a body made of field groups: each entry
/// (or sequence element) goes to the groups in order; the first group that
/// knows the key takes it.
macro_rules! read_groups {
    ($this:ident, [$($($field:ident).+),+ $(,)?]) => {
        fn read_entry<'de, A: MapAccess<'de>>(
            &mut $this,
            key: &str,
            map: &mut A,
        ) -> Result<bool, A::Error> {
            Ok($($this.$($field).+.read_entry(key, map)? ||)+ false)
        }

        fn read_seq<'de, A: SeqAccess<'de>>(
            &mut $this,
            seq: &mut A,
            read: &mut usize,
            expected: &dyn Expected,
        ) -> Result<(), A::Error> {
            $($this.$($field).+.read_seq(seq, read, expected)?;)+
            Ok(())
        }
    };
}

/// The OpenAPI schema of a flat body made of field groups: one object with
/// every group's properties, in order (`closed`: unknown fields refused), and
/// every group's component schemas.
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

/// A new monitor: the groups of fields its request body holds side by
/// side (serde's and utoipa's view is one flat object; see
/// [`super::fields`]).
#[derive(Debug)]
pub struct CreateMonitor {
    pub first: CreateFirst,
    pub rest: CreateRest,
    pub kinds: kinds::Given,
    pub placement: placement::Create,
    pub labels: labels::Create,
    pub alert_rules: alert_rules::Create,
    pub reference: reference::Create,
}

const CREATE_DESCRIPTION: &str =
    "A new monitor. Only `name` and `type` are required (and `target` for\n\
every type but heartbeat, `keyword` for keyword monitors); the rest have\n\
defaults. Options of another type than the monitor's (e.g. `headers` on a\n\
tcp monitor) are refused.";

/// The create request's fields, in the body's order.
const CREATE_PARTS: &[&[&str]] = &[
    CREATE_FIRST_NAMES,
    keyword::Create::NAMES,
    CreateRest::NAMES,
    http::Create::NAMES,
    dns::Create::NAMES,
    tls::Create::NAMES,
    heartbeat::Create::NAMES,
    placement::Create::NAMES,
    labels::Create::NAMES,
    alert_rules::Create::NAMES,
    reference::Create::NAMES,
];
pub(super) static CREATE_NAMES: [&str; fields::count(CREATE_PARTS)] = fields::concat(CREATE_PARTS);

impl<'de> Deserialize<'de> for CreateMonitor {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_struct("CreateMonitor", &CREATE_NAMES, CreateVisitor)
    }
}

struct CreateVisitor;

impl<'de> Visitor<'de> for CreateVisitor {
    type Value = CreateMonitor;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("struct CreateMonitor")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<CreateMonitor, A::Error> {
        let (mut name, mut kind) = (None, None);
        let (mut target, mut interval_secs, mut timeout_secs) = (None, None, None);
        let mut body = CreateGroups::default();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "name" => name = Some(map.next_value()?),
                "type" => kind = Some(map.next_value()?),
                "target" => target = map.next_value()?,
                "interval_secs" => interval_secs = map.next_value()?,
                "timeout_secs" => timeout_secs = map.next_value()?,
                _ => {
                    if !body.read_entry(&key, &mut map)? {
                        return Err(de::Error::unknown_field(&key, &CREATE_NAMES));
                    }
                }
            }
        }
        let first = CreateFirst {
            name: name.ok_or_else(|| de::Error::missing_field("name"))?,
            kind: kind.ok_or_else(|| de::Error::missing_field("type"))?,
            target,
            interval_secs,
            timeout_secs,
        };
        Ok(body.with(first))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<CreateMonitor, A::Error> {
        let expected = format!("struct CreateMonitor with {} elements", CREATE_NAMES.len());
        let expected: &dyn Expected = &expected.as_str();
        let mut read = 0;
        macro_rules! element {
            () => {{
                let value = seq
                    .next_element()?
                    .ok_or_else(|| de::Error::invalid_length(read, expected))?;
                read += 1;
                value
            }};
        }
        let name = element!();
        let kind = element!();
        let target = element!();
        let interval_secs = element!();
        let timeout_secs = element!();
        let first = CreateFirst {
            name,
            kind,
            target,
            interval_secs,
            timeout_secs,
        };
        let mut body = CreateGroups::default();
        body.read_seq(&mut seq, &mut read, expected)?;
        Ok(body.with(first))
    }
}

/// The create request's groups after the first, read in the body's order.
#[derive(Default)]
struct CreateGroups {
    rest: CreateRest,
    kinds: kinds::Given,
    placement: placement::Create,
    labels: labels::Create,
    alert_rules: alert_rules::Create,
    reference: reference::Create,
}

impl CreateGroups {
    read_groups!(
        self,
        [
            kinds.keyword,
            rest,
            kinds.http,
            kinds.dns,
            kinds.tls,
            kinds.heartbeat,
            placement,
            labels,
            alert_rules,
            reference
        ]
    );

    fn with(self, first: CreateFirst) -> CreateMonitor {
        CreateMonitor {
            first,
            rest: self.rest,
            kinds: self.kinds,
            placement: self.placement,
            labels: self.labels,
            alert_rules: self.alert_rules,
            reference: self.reference,
        }
    }
}

flat_body_schema!(
    CreateMonitor,
    CREATE_DESCRIPTION,
    true,
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
#[derive(Debug, Default)]
pub struct UpdateMonitor {
    pub first: UpdateFirst,
    pub rest: UpdateRest,
    pub kinds: kinds::Patch,
    pub placement: placement::Update,
    pub labels: labels::Update,
    pub alert_rules: alert_rules::Update,
    pub reference: reference::Update,
}

const UPDATE_DESCRIPTION: &str =
    "A partial update: fields left out keep their value. See the field\n\
descriptions of the create request for the bounds.";

/// The PATCH's fields, in the body's order.
const UPDATE_PARTS: &[&[&str]] = &[
    UpdateFirst::NAMES,
    keyword::Update::NAMES,
    UpdateRest::NAMES,
    http::Update::NAMES,
    dns::Update::NAMES,
    tls::Update::NAMES,
    heartbeat::Update::NAMES,
    placement::Update::NAMES,
    labels::Update::NAMES,
    alert_rules::Update::NAMES,
    reference::Update::NAMES,
];
static UPDATE_NAMES: [&str; fields::count(UPDATE_PARTS)] = fields::concat(UPDATE_PARTS);

impl<'de> Deserialize<'de> for UpdateMonitor {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_struct("UpdateMonitor", &UPDATE_NAMES, UpdateVisitor)
    }
}

struct UpdateVisitor;

impl<'de> Visitor<'de> for UpdateVisitor {
    type Value = UpdateMonitor;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("struct UpdateMonitor")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<UpdateMonitor, A::Error> {
        let mut body = UpdateMonitor::default();
        while let Some(key) = map.next_key::<String>()? {
            if !body.read_entry(&key, &mut map)? {
                return Err(de::Error::unknown_field(&key, &UPDATE_NAMES));
            }
        }
        Ok(body)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<UpdateMonitor, A::Error> {
        let expected = format!("struct UpdateMonitor with {} elements", UPDATE_NAMES.len());
        let mut body = UpdateMonitor::default();
        body.read_seq(&mut seq, &mut 0, &expected.as_str())?;
        Ok(body)
    }
}

impl UpdateMonitor {
    read_groups!(
        self,
        [
            first,
            kinds.keyword,
            rest,
            kinds.http,
            kinds.dns,
            kinds.tls,
            kinds.heartbeat,
            placement,
            labels,
            alert_rules,
            reference
        ]
    );
}

flat_body_schema!(
    UpdateMonitor,
    UPDATE_DESCRIPTION,
    true,
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

/// A monitor, with its definition and its runtime state: the groups of
/// fields of one flat object.
#[derive(Debug, Serialize)]
pub struct MonitorResponse {
    #[serde(flatten)]
    pub first: ShownFirst,
    #[serde(flatten)]
    pub keyword: keyword::Shown,
    #[serde(flatten)]
    pub rest: ShownRest,
    #[serde(flatten)]
    pub http: http::Shown,
    #[serde(flatten)]
    pub dns: dns::Shown,
    #[serde(flatten)]
    pub tls: tls::Shown,
    #[serde(flatten)]
    pub heartbeat: heartbeat::Shown,
    #[serde(flatten)]
    pub placement: placement::Shown,
    #[serde(flatten)]
    pub labels: labels::Shown,
    #[serde(flatten)]
    pub alert_rules: alert_rules::Shown,
    #[serde(flatten)]
    pub reference: reference::Shown,
}

flat_body_schema!(
    MonitorResponse,
    "A monitor, with its definition and its runtime state.",
    false,
    [
        ShownFirst,
        keyword::Shown,
        ShownRest,
        http::Shown,
        dns::Shown,
        tls::Shown,
        heartbeat::Shown,
        placement::Shown,
        labels::Shown,
        alert_rules::Shown,
        reference::Shown,
    ]
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
        Ok(Self {
            first: ShownFirst {
                id: m.id,
                org_id: m.org_id,
                user_id: m.org_id,
                name: m.name,
                kind: m.kind.into(),
                target: m.target,
                interval_secs: m.interval_secs,
                timeout_secs: m.timeout_secs,
            },
            keyword: kinds.keyword,
            rest: ShownRest {
                expected_status: m.expected_status,
                confirmation_count: m.confirmation_count,
                heartbeat_token: m.heartbeat_token,
                ssl_warn_days: m.ssl_warn_days,
                latency_warn_ms: m.latency_warn_ms,
                consecutive_failures: m.consecutive_failures,
                last_heartbeat_at: m.last_heartbeat_at,
                ssl_expires_at: m.ssl_expires_at,
                active: m.active,
                status: m.status.into(),
                last_checked_at: m.last_checked_at,
                created_at: m.created_at,
                updated_at: m.updated_at,
                definition_version: m.definition_version,
                alert_contact_ids,
            },
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
