//! The snapshot every request is answered from: each page and badge
//! rendered once per refresh into its final bytes (with ETag, gzip and
//! brotli forms). A rendering whose bytes did not change since the last
//! refresh is reused as it was, so a refresh compresses only what changed.

use crate::model::{self, AggregateRows, MonitorView, StateRows};
use crate::render::badge::{self, Colour};
use crate::render::page::{self, PageHead};
use crate::render::Rendered;
use chrono::{DateTime, Utc};
use std::collections::HashMap;
use std::sync::Arc;

pub const HTML: &str = "text/html; charset=utf-8";
pub const SVG: &str = "image/svg+xml";
pub const JSON: &str = "application/json";
pub const ATOM: &str = "application/atom+xml; charset=utf-8";

/// The badge files, as they appear in `/badge/{token}/{file}`.
pub const BADGE_FILES: &[&str] = &[
    "status.svg",
    "uptime-24h.svg",
    "uptime-7d.svg",
    "uptime-30d.svg",
    "uptime-90d.svg",
    "response-time-24h.svg",
    "response-time-7d.svg",
    "shields.json",
];

/// One page as served.
#[derive(Debug, Clone)]
pub struct ServedPage {
    pub id: i64,
    pub org_id: i64,
    pub title: String,
    /// SHA-256 (hex) of a private page's access token.
    pub access_token_sha256: Option<String>,
    pub html: Arc<Rendered>,
    /// The notices as an Atom feed.
    pub feed: Arc<Rendered>,
}

/// Everything the service answers, at one moment.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub pages_by_slug: HashMap<String, ServedPage>,
    /// Custom domain (lowercase) to slug.
    pub slug_by_domain: HashMap<String, String>,
    /// Badge token digest to the badge files.
    pub badges: HashMap<String, HashMap<&'static str, Arc<Rendered>>>,
    /// The monitors shown, for tests and metrics.
    pub monitors: HashMap<i64, Arc<MonitorView>>,
    pub built_at: Option<DateTime<Utc>>,
}

/// Renderings kept from the previous snapshot, by ETag.
type Reuse = HashMap<String, Arc<Rendered>>;

fn rendered(reuse: &Reuse, content_type: &'static str, body: String) -> Arc<Rendered> {
    let etag = Rendered::etag_of(body.as_bytes());
    match reuse.get(&etag) {
        Some(same) if same.content_type == content_type => same.clone(),
        _ => Arc::new(Rendered::new(content_type, body)),
    }
}

impl Snapshot {
    /// Every rendering of this snapshot, by ETag (for the next build).
    fn renderings(&self) -> Reuse {
        let mut out = Reuse::new();
        for page in self.pages_by_slug.values() {
            out.insert(page.html.etag.clone(), page.html.clone());
            out.insert(page.feed.etag.clone(), page.feed.clone());
        }
        for files in self.badges.values() {
            for r in files.values() {
                out.insert(r.etag.clone(), r.clone());
            }
        }
        out
    }

    /// The next snapshot from the rows of a refresh.
    pub fn build(
        previous: &Snapshot,
        state: &StateRows,
        aggregates: &AggregateRows,
        now: DateTime<Utc>,
        maintenance_horizon: chrono::Duration,
        feed_authority: &str,
    ) -> Snapshot {
        let reuse = previous.renderings();
        let monitors = model::monitor_views(state, aggregates, now);
        let notices = model::notice_views(state);
        let mut pages_by_slug = HashMap::new();
        let mut slug_by_domain = HashMap::new();
        for page in &state.pages {
            let groups = model::page_groups(page, &monitors);
            let page_notices = notices.get(&page.id).map(Vec::as_slice).unwrap_or_default();
            let maintenance = crate::maintenance::page_maintenance(
                page,
                &groups,
                &state.maintenance,
                now,
                maintenance_horizon,
            );
            let html = page::render(
                &PageHead {
                    title: &page.title,
                    description: page.description.as_deref(),
                    logo_url: page.logo_url.as_deref(),
                    feed_path: &format!("/status/{}/feed.atom", page.slug),
                    // Private pages take no subscriptions: their notices
                    // are for token holders only.
                    subscribe_path: page
                        .access_token_sha256
                        .is_none()
                        .then(|| format!("/status/{}/subscriptions", page.slug))
                        .as_deref(),
                },
                &groups,
                page_notices,
                &maintenance,
            );
            let page_path = format!("/status/{}", page.slug);
            let feed = crate::render::feed::render(
                &crate::render::feed::FeedHead {
                    authority: feed_authority,
                    page_id: page.id,
                    title: &page.title,
                    page_path: &page_path,
                    page_updated: page.updated_at,
                },
                page_notices,
            );
            pages_by_slug.insert(
                page.slug.clone(),
                ServedPage {
                    id: page.id,
                    org_id: page.org_id,
                    title: page.title.clone(),
                    access_token_sha256: page.access_token_sha256.clone(),
                    html: rendered(&reuse, HTML, html),
                    feed: rendered(&reuse, ATOM, feed),
                },
            );
            if let Some(domain) = &page.custom_domain {
                slug_by_domain.insert(domain.to_ascii_lowercase(), page.slug.clone());
            }
        }
        let mut badges = HashMap::new();
        for b in &state.badges {
            if let Some(monitor) = monitors.get(&b.monitor_id) {
                badges.insert(b.token_sha256.clone(), badge_files(&reuse, monitor));
            }
        }
        Snapshot {
            pages_by_slug,
            slug_by_domain,
            badges,
            monitors,
            built_at: Some(now),
        }
    }
}

fn state_badge(monitor: &MonitorView) -> (&'static str, Colour) {
    use crate::model::State;
    match monitor.state {
        State::Up => ("up", Colour::BrightGreen),
        State::Degraded => ("degraded", Colour::Yellow),
        State::Down => ("down", Colour::Red),
        State::Pending => ("pending", Colour::LightGrey),
        State::Paused => ("paused", Colour::LightGrey),
    }
}

/// The badge of a measure over a window (`uptime 24h`, `response time
/// 7d`): its value as shown and the colour it earns, or `no data`.
fn window_badge(reuse: &Reuse, label: String, shown: Option<(String, Colour)>) -> Arc<Rendered> {
    let svg = match shown {
        Some((value, colour)) => badge::flat(&label, &value, colour),
        None => badge::flat(&label, "no data", Colour::LightGrey),
    };
    rendered(reuse, SVG, svg)
}

fn badge_files(reuse: &Reuse, monitor: &MonitorView) -> HashMap<&'static str, Arc<Rendered>> {
    let (state, colour) = state_badge(monitor);
    let status_json = badge::shields_endpoint("status", state, colour);
    let mut files = HashMap::from([
        (
            "status.svg",
            rendered(reuse, SVG, badge::flat("status", state, colour)),
        ),
        ("shields.json", rendered(reuse, JSON, status_json)),
    ]);
    let uptimes = [
        ("uptime-24h.svg", "24h", monitor.uptime_24h),
        ("uptime-7d.svg", "7d", monitor.uptime_7d),
        ("uptime-30d.svg", "30d", monitor.uptime_30d),
        ("uptime-90d.svg", "90d", monitor.uptime_90d),
    ];
    for (file, window, uptime) in uptimes {
        let shown = uptime.map(|p| (badge::format_percent(p), badge::uptime_colour(p)));
        files.insert(file, window_badge(reuse, format!("uptime {window}"), shown));
    }
    let response_times = [
        ("response-time-24h.svg", "24h", monitor.response_24h),
        ("response-time-7d.svg", "7d", monitor.response_7d),
    ];
    for (file, window, response_ms) in response_times {
        let shown = response_ms.map(|ms| {
            (
                format!("{} ms", ms.round()),
                badge::response_time_colour(ms),
            )
        });
        let label = format!("response time {window}");
        files.insert(file, window_badge(reuse, label, shown));
    }
    files
}
