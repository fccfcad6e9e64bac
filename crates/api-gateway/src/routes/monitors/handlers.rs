//! The endpoints of `/api/v1/monitors` and the transactions behind them.

use super::alert_rules;
use super::announce::announce;
use super::common::MonitorStatus;
use super::draft::Draft;
use super::labels::check_selector;
use super::monitor_type::MonitorType;
use super::resource::checked_create;
use super::types::{CreateMonitor, MonitorList, MonitorResponse, UpdateMonitor};
use super::writes::{self, WriteSettings};
use crate::auth::AuthUser;
use crate::error::{ApiError, ErrorBody, FieldError};
use crate::state::AppState;
use crate::validation::{check_search, not_null, PageQuery, Problems};
use actix_web::{web, HttpResponse};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::AsyncConnection;
use serde::Deserialize;
use uptime_contracts::MonitorChange;
use uptime_db::refs::RefKind;
use utoipa::IntoParams;

/// Create a monitor.
#[utoipa::path(post, path = "/api/v1/monitors", operation_id = "createMonitor", tag = "monitors", request_body = CreateMonitor,
    responses((status = 201, body = MonitorResponse), (status = 403, body = ErrorBody, description = "quota exceeded: the user owns as many as their quota allows (`details` field `monitors`), or the monitor would take the user's checks per minute (regions × 60 / interval_secs over their active monitors; heartbeats and paused monitors count nothing) past their budget (field `checks_per_minute`)")))]
pub async fn create(
    state: web::Data<AppState>,
    user: AuthUser,
    body: crate::validation::Json<CreateMonitor>,
) -> Result<HttpResponse, ApiError> {
    let settings = WriteSettings::of(&state);
    let (creation, rules) = checked_create(&settings, user.org_id, body.into_inner())?;
    check_selector(&user, &creation.labels)?;

    let mut conn = state.conn().await?;
    let written = conn
        .transaction::<_, ApiError, _>(|c| {
            async move { writes::insert(c, &user, creation, rules, &settings).await }.scope_boxed()
        })
        .await?;
    drop(conn);
    let id = written.row.id;
    announce(&state, id, MonitorChange::Upserted).await;
    Ok(crate::http::response::created(
        format!("/api/v1/monitors/{id}"),
        written.shown(&state.settings.regions)?,
    ))
}

/// What the list keeps besides labels: every given test must hold. Read as
/// text and parsed here, so a bad value is a 400 naming its parameter.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct MonitorFilterQuery {
    /// Only monitors of this type.
    #[serde(rename = "type")]
    #[param(rename = "type", value_type = Option<MonitorType>, inline)]
    pub monitor_type: Option<String>,
    /// Only monitors in this status now.
    #[param(value_type = Option<MonitorStatus>, inline)]
    pub status: Option<String>,
    /// Only active (`true`) or paused (`false`) monitors.
    #[param(value_type = Option<bool>)]
    pub active: Option<String>,
    /// Only monitors whose name contains this, compared without case
    /// (1 to 100 characters; `%` and `_` are literal).
    #[param(min_length = 1, max_length = 100)]
    pub search: Option<String>,
}

/// [`MonitorFilterQuery`] parsed.
struct MonitorFilter {
    kind: Option<&'static str>,
    status: Option<&'static str>,
    active: Option<bool>,
}

impl MonitorFilterQuery {
    fn parse(&self) -> Result<MonitorFilter, ApiError> {
        let mut problems = Vec::new();
        let mut parse =
            |field: &str, value: &Option<String>, expected: &str| -> Option<serde_json::Value> {
                let value = value.as_deref()?;
                let parsed = serde_json::Value::String(value.to_string());
                if expected.split(", ").any(|v| v == value) {
                    Some(parsed)
                } else {
                    problems.push(FieldError::new(field, format!("one of {expected}")));
                    None
                }
            };
        let kind = parse(
            "type",
            &self.monitor_type,
            "http, keyword, heartbeat, tcp, tls, dns, icmp",
        )
        .and_then(|v| serde_json::from_value::<MonitorType>(v).ok())
        .map(|t| uptime_contracts::MonitorKind::from(t).as_str());
        let status = parse("status", &self.status, "pending, up, degraded, down")
            .and_then(|v| serde_json::from_value::<MonitorStatus>(v).ok())
            .map(MonitorStatus::as_str);
        let active = parse("active", &self.active, "true, false").map(|v| v == "true");
        check_search(self.search.as_deref(), &mut problems);
        if !problems.is_empty() {
            return Err(ApiError::InvalidQuery(problems));
        }
        Ok(MonitorFilter {
            kind,
            status,
            active,
        })
    }
}

/// List the caller's monitors in id order, a page at a time; `?label=key=value`
/// (repeatable, all must hold) keeps those with these labels, and `type`,
/// `status`, `active` and `search` narrow it further.
#[utoipa::path(get, path = "/api/v1/monitors", operation_id = "listMonitors", tag = "monitors",
    params(PageQuery, MonitorFilterQuery,
        ("label" = Option<Vec<String>>, Query, style = Form, explode, max_items = 32,
            description = "`key=value`: only monitors labelled so; repeat it for several labels, all of which must hold (e.g. `?label=env=prod&label=team=payments`); a value may be empty (`?label=tier=`)")),
    responses((status = 200, body = MonitorList)))]
pub async fn list(
    state: web::Data<AppState>,
    user: AuthUser,
    req: actix_web::HttpRequest,
    query: web::Query<PageQuery>,
    narrowing: web::Query<MonitorFilterQuery>,
) -> Result<HttpResponse, ApiError> {
    let page = query.keyset()?;
    let labels = super::labels::filter_of(req.query_string())
        .map_err(ApiError::InvalidQuery)?
        .map(|selector| selector.to_json());
    let narrowed = narrowing.parse()?;
    let filter = uptime_db::monitors::ListFilter {
        labels: labels.as_ref(),
        kind: narrowed.kind,
        status: narrowed.status,
        active: narrowed.active,
        name_contains: narrowing.search.as_deref(),
    };
    let mut conn = state.conn().await?;
    let (rows, next_cursor) = page
        .fetch(
            |after, n| {
                uptime_db::monitors::list_page_filtered(&mut conn, user.reach(), &filter, after, n)
            },
            |m| m.id,
        )
        .await?;
    let ids: Vec<i64> = rows.iter().map(|m| m.id).collect();
    let mut contacts = uptime_db::monitors::contact_ids_of(&mut conn, &ids).await?;
    let mut refs = uptime_db::refs::of(&mut conn, RefKind::Monitor, &ids).await?;
    let monitors = rows
        .into_iter()
        .map(|m| {
            let contact_ids = contacts.remove(&m.id).unwrap_or_default();
            let r#ref = refs.remove(&m.id);
            MonitorResponse::from_row(m, contact_ids, &state.settings.regions)
                .map(|shown| shown.with_ref(r#ref))
        })
        .collect::<Result<_, _>>()?;
    Ok(HttpResponse::Ok().json(MonitorList {
        monitors,
        next_cursor,
    }))
}

/// Change some fields of one of the caller's monitors; `active` pauses and resumes it.
///
/// A change that raises what the monitor costs of the caller's checks per
/// minute (more regions, a shorter interval, resuming it, turning a
/// heartbeat into a checked monitor) must fit their budget; one that lowers
/// or keeps it is always allowed, even over the budget.
#[utoipa::path(patch, path = "/api/v1/monitors/{id}", operation_id = "updateMonitor", tag = "monitors", request_body = UpdateMonitor,
    params(("id" = i64, Path, description = "Monitor id")),
    responses((status = 200, body = MonitorResponse),
        (status = 400, body = ErrorBody, description = "`invalid request body` naming each field refused; among them `basic_auth.password` when the target moves to another origin (scheme, host, port) while a password is stored and the request neither restates it nor removes it or `basic_auth`"),
        (status = 403, body = ErrorBody, description = "quota exceeded (`details` field `checks_per_minute`): the change raises the monitor's checks per minute (regions × 60 / interval_secs, while active) and would take the caller's past their budget; nothing changed")))]
pub async fn update(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<i64>,
    if_match: crate::etag::IfMatch,
    body: crate::validation::Json<UpdateMonitor>,
) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    let mut patch = body.into_inner();
    let settings = WriteSettings::of(&state);
    let rules_patch = std::mem::take(&mut patch.alert_rules);
    let ref_patch = patch.reference.ref_.take();
    let mut conn = state.conn().await?;
    let written = conn
        .transaction::<_, ApiError, _>(|c| {
            async move {
                let (current, tag) = writes::Current::load(c, &user, id, &settings.regions)
                    .await?
                    .ok_or(ApiError::NotFound)?;
                if_match.check(&tag)?;
                let mut problems = Problems::new();
                let contact_ids = not_null(
                    &mut problems,
                    "alert_contact_ids",
                    patch.rest.alert_contact_ids.take(),
                );
                let r#ref =
                    crate::refs::patched(current.r#ref.as_deref(), ref_patch, &mut problems);
                let rules =
                    alert_rules::merged(&current.row, rules_patch, settings.floors, &mut problems);
                let draft = Draft::merge(&current.row, patch, &mut problems)?;
                draft.validate(&mut problems, settings.allow_private, &settings.regions);
                problems.into_result()?;
                let change = writes::Rewrite {
                    draft,
                    rules,
                    contact_ids,
                    r#ref,
                };
                writes::rewrite(c, &user, current, change, &settings).await
            }
            .scope_boxed()
        })
        .await?;
    drop(conn);
    if written.changed {
        announce(&state, id, MonitorChange::Upserted).await;
    }
    Ok(HttpResponse::Ok().json(written.shown(&state.settings.regions)?))
}
