//! `GET /api/v1/metrics`: the caller's monitors (those its key reaches) as
//! OpenMetrics, for the organisation's own Prometheus (like Healthchecks',
//! Gatus' and Uptime Kuma's metrics endpoints), behind an API key with
//! `read` scope.
//!
//! Bounded in cost: a page is built from what the recorder already keeps
//! (each monitor row's runtime columns and the daily rollup) by one query,
//! whatever the number of monitors, and kept per organisation and key
//! selector for
//! `tenant_metrics.cache_secs`: scrapers polling faster than that, however
//! many, cost no query. The request also counts against the organisation's
//! API rate limit like any other. At most `tenant_metrics.max_monitors`
//! monitors are shown.

use crate::access::auth::AuthUser;
use crate::api::table::{routes, Routes};
use crate::http::error::ApiError;
use crate::state::AppState;
use actix_web::{http::header, web, HttpResponse};
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::{Registry, Unit};
use std::sync::atomic::AtomicU64;
use uptime_db::tenant_metrics::MonitorFigures;

/// OpenMetrics 1.0, which Prometheus asks for first.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

pub fn routes() -> Routes {
    routes![get: READ]
}

/// The caller's monitors as OpenMetrics text: those its key reaches (a key
/// with a label selector sees only the monitors whose labels hold it).
///
/// Per monitor (labels `monitor_id`, `monitor` (its name), `type`):
/// `uptime_monitor_up` (1 up or degraded, 0 down; absent while pending or
/// paused), `uptime_monitor_status` (1 for its status, `paused` for a paused
/// monitor), `uptime_monitor_last_check_timestamp_seconds`,
/// `uptime_monitor_latency_seconds` (the newest check's),
/// `uptime_monitor_consecutive_failures`, `uptime_monitor_uptime_ratio`
/// (label `window`: `1d` today so far, `7d`, `30d`, UTC days of the daily
/// rollup; absent without checks in the window) and
/// `uptime_monitor_certificate_expiry_timestamp_seconds` (TLS monitors and
/// https targets). Plus `uptime_metrics_monitors_truncated` (1 when the
/// organisation has more than `tenant_metrics.max_monitors`, of which the
/// lowest ids are shown). Built at most every `tenant_metrics.cache_secs`
/// (15 s) per organisation; scrape every 30 s or slower.
#[utoipa::path(get, path = "/api/v1/metrics", operation_id = "getMetrics", tag = "usage", responses(
        (status = 200, description = "OpenMetrics text", content_type = "application/openmetrics-text; version=1.0.0; charset=utf-8", body = String)))]
pub async fn get(state: web::Data<AppState>, user: AuthUser) -> Result<HttpResponse, ApiError> {
    let reach = user.reach();
    let cache_key = (
        user.org_id,
        reach.bind().map(|s| s.to_string()).unwrap_or_default(),
    );
    let page = match state.tenant_metrics.get(&cache_key) {
        Some(page) => page,
        None => {
            let limit = state.settings.tenant_metrics.max_monitors.max(1);
            let mut conn = state.conn().await?;
            // One more than shown tells whether the page is truncated.
            let mut rows = uptime_db::tenant_metrics::monitor_figures(
                &mut conn,
                reach,
                chrono::Utc::now().date_naive(),
                limit + 1,
            )
            .await?;
            drop(conn);
            let truncated = rows.len() as i64 > limit;
            rows.truncate(limit as usize);
            let page = web::Bytes::from(render(&rows, truncated));
            state.tenant_metrics.insert(cache_key, page.clone());
            page
        }
    };
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, CONTENT_TYPE))
        .insert_header((
            header::CACHE_CONTROL,
            format!(
                "private, max-age={}",
                state.settings.tenant_metrics.cache_secs
            ),
        ))
        .body(page))
}

/// Label names and values, the values escaped already (`escape_label_value`).
type Labels = Vec<(String, String)>;

/// A label value as the text format writes it between its quotes:
/// backslash, double quote and newline escaped. prometheus-client writes a
/// `String` value as it is, so a monitor's name (the tenant's text) would
/// otherwise end the label early and could forge samples.
pub fn escape_label_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}
type FloatGauge = Gauge<f64, AtomicU64>;

/// The page of `rows`. Pure, so the format is tested without a server.
pub fn render(rows: &[MonitorFigures], truncated: bool) -> String {
    let up = Gauges::new(
        "uptime_monitor_up",
        "1 when the monitor is up or degraded, 0 when down; absent while pending or paused",
        None,
    );
    let status = Gauges::new(
        "uptime_monitor_status",
        "1 for the monitor's status (pending, up, degraded, down, paused)",
        None,
    );
    let last_check = Gauges::new(
        "uptime_monitor_last_check_timestamp",
        "When the monitor's newest check ran",
        Some(Unit::Seconds),
    );
    let latency = Gauges::new(
        "uptime_monitor_latency",
        "The newest check's latency",
        Some(Unit::Seconds),
    );
    let failures = Gauges::new(
        "uptime_monitor_consecutive_failures",
        "Failed checks in a row",
        None,
    );
    let ratio = Gauges::new(
        "uptime_monitor_uptime_ratio",
        "Checks up or degraded over all checks, by window of UTC days (1d: today so far)",
        None,
    );
    let expiry = Gauges::new(
        "uptime_monitor_certificate_expiry_timestamp",
        "When the monitor's TLS certificate expires",
        Some(Unit::Seconds),
    );
    let truncated_gauge = Gauges::new(
        "uptime_metrics_monitors_truncated",
        "1 when the organisation has more monitors than one page shows",
        None,
    );
    truncated_gauge.set(Vec::new(), if truncated { 1.0 } else { 0.0 });

    for m in rows {
        let labels: Labels = vec![
            ("monitor_id".into(), m.id.to_string()),
            ("monitor".into(), escape_label_value(&m.name)),
            ("type".into(), m.kind.clone()),
        ];
        let with = |key: &str, value: &str| {
            let mut l = labels.clone();
            l.push((key.into(), value.into()));
            l
        };
        let shown_status = if m.active {
            m.status.as_str()
        } else {
            "paused"
        };
        status.set(with("status", shown_status), 1.0);
        match shown_status {
            "up" | "degraded" => {
                up.set(labels.clone(), 1.0);
            }
            "down" => {
                up.set(labels.clone(), 0.0);
            }
            _ => {}
        }
        if let Some(at) = m.last_checked_at {
            last_check.set(labels.clone(), at.timestamp_millis() as f64 / 1000.0);
        }
        if let Some(ms) = m.last_latency_ms {
            latency.set(labels.clone(), f64::from(ms) / 1000.0);
        }
        failures.set(labels.clone(), f64::from(m.consecutive_failures));
        for (window, total, up_checks) in [
            ("1d", m.total_1d, m.up_1d),
            ("7d", m.total_7d, m.up_7d),
            ("30d", m.total_30d, m.up_30d),
        ] {
            if total > 0 {
                ratio.set(with("window", window), up_checks as f64 / total as f64);
            }
        }
        if let Some(at) = m.ssl_expires_at {
            expiry.set(labels.clone(), at.timestamp() as f64);
        }
    }
    // Families without a sample are left out: an empty family is valid
    // OpenMetrics, but some parsers stumble on one, and it tells nothing.
    let mut registry = Registry::default();
    for gauges in [
        up,
        status,
        last_check,
        latency,
        failures,
        ratio,
        expiry,
        truncated_gauge,
    ] {
        gauges.register_if_used(&mut registry);
    }
    let mut out = String::new();
    encode(&mut out, &registry).expect("writing to a String cannot fail");
    out
}

/// One metric family of gauges, registered only once it has a sample.
struct Gauges {
    name: &'static str,
    help: &'static str,
    unit: Option<Unit>,
    family: Family<Labels, FloatGauge>,
    used: std::cell::Cell<bool>,
}

impl Gauges {
    fn new(name: &'static str, help: &'static str, unit: Option<Unit>) -> Self {
        Self {
            name,
            help,
            unit,
            family: Family::default(),
            used: std::cell::Cell::new(false),
        }
    }

    fn set(&self, labels: Labels, value: f64) {
        self.family.get_or_create(&labels).set(value);
        self.used.set(true);
    }

    fn register_if_used(self, registry: &mut Registry) {
        if !self.used.get() {
            return;
        }
        match self.unit {
            Some(unit) => registry.register_with_unit(self.name, self.help, unit, self.family),
            None => registry.register(self.name, self.help, self.family),
        }
    }
}
