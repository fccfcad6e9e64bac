//! The status page: server-rendered HTML that needs no JavaScript. Each
//! monitor shows its name and state, 90 daily bars (the last 30 on narrow
//! screens, where the scale names 30 days and the 30-day figure; each
//! bar's figure shown on hover by CSS), every day's figure as text in a
//! disclosure (one tab stop, for keyboards and screen readers: the bars are
//! no tab stops and hidden from assistive technology), and its response
//! time over the last day as an inline SVG line. Nothing else of a monitor
//! is shown: no target, no options. A skip link leads to the monitors.
//!
//! Colours meet WCAG AA: text on its background is at least 4.5:1, bars
//! and the borders of form controls at least 3:1 (1.4.11), in the light
//! and the dark scheme (`prefers-color-scheme`).

use super::escape;
use crate::maintenance::MaintenanceView;
use crate::model::{GroupView, MonitorView, NoticeView, Overall, State, LATENCY_HOURS};
use chrono::{DateTime, Utc};
use std::fmt::Write;

pub(crate) const STYLE: &str = r#"
:root{color-scheme:light dark;--bg:#fff;--fg:#1f2328;--muted:#59636e;--card:#f6f8fa;--line:#d1d9e0;--control:#818b98;
--up:#1a7f37;--degraded:#9a6700;--down:#cf222e;--pending:#59636e;--none:#818b98}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#f0f6fc;--muted:#9198a1;--card:#151b23;--line:#3d444d;--control:#767d86;
--up:#3fb950;--degraded:#d29922;--down:#f85149;--pending:#9198a1;--none:#656c76}}
*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:56rem;margin:0 auto;padding:1rem}header{display:flex;gap:1rem;align-items:center;margin:1rem 0}
header img{max-height:3rem;max-width:8rem}h1{font-size:1.6rem;margin:0}h2{font-size:1.2rem;margin:1.5rem 0 .5rem}
.muted{color:var(--muted)}.overall{padding:1rem;border-radius:.5rem;font-weight:600;font-size:1.2rem;color:#fff}
.overall.up{background:#1a7f37}.overall.degraded{background:#9a6700}.overall.down{background:#cf222e}.overall.pending{background:#59636e}
.card{background:var(--card);border:1px solid var(--line);border-radius:.5rem;padding:.75rem 1rem;margin:.5rem 0}
.row{display:flex;justify-content:space-between;align-items:center;gap:.5rem;flex-wrap:wrap}
.name{font-weight:600;overflow-wrap:anywhere}
.state{font-weight:600;padding:0 .5rem;border-radius:1rem;color:#fff;font-size:.9rem}
.state.up{background:#1a7f37}.state.degraded{background:#9a6700}.state.down{background:#cf222e}.state.pending,.state.paused{background:#59636e}
ol.bars{list-style:none;display:flex;gap:1px;padding:0;margin:.5rem 0 0;height:2rem;position:relative}
ol.bars li{flex:1;border-radius:1px;background:var(--none);min-width:1px}
ol.bars li.up{background:var(--up)}ol.bars li.minor{background:var(--degraded)}ol.bars li.major{background:var(--down)}
ol.bars li:hover::after{content:attr(data-tip);position:absolute;left:0;top:2.2rem;background:var(--fg);color:var(--bg);
padding:.2rem .5rem;border-radius:.25rem;font-size:.85rem;white-space:nowrap;z-index:1}
.scale{display:flex;justify-content:space-between;font-size:.8rem}.narrow{display:none}
details.days{font-size:.85rem;margin:.25rem 0}details.days ol{columns:12rem;margin:.25rem 0;padding-left:1.25rem}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
.skip{position:absolute;left:.5rem;top:-4rem;padding:.5rem 1rem;background:var(--fg);color:var(--bg);border-radius:.25rem;z-index:2}.skip:focus{top:.5rem}
svg.latency{width:100%;height:3rem;display:block}.latency-caption{font-size:.8rem;margin:.5rem 0 .25rem}svg.latency polyline{fill:none;stroke:var(--up);stroke-width:2;vector-effect:non-scaling-stroke}
.incident{border-left:4px solid var(--down)}.maintenance{border-left:4px solid var(--pending)}
input,button{font:inherit;color:var(--fg);background:var(--bg);border:1px solid var(--control);border-radius:.25rem;padding:.25rem .5rem}.notice{border-left:4px solid var(--degraded)}.notice h3{margin:0 0 .25rem;font-size:1.05rem}
a{color:inherit}footer{margin:2rem 0;font-size:.85rem}
@media (max-width:30rem){ol.bars li:nth-child(-n+60){display:none}.wide{display:none}.narrow{display:inline}}
"#;

/// What the page's header shows.
pub struct PageHead<'a> {
    pub title: &'a str,
    pub description: Option<&'a str>,
    pub logo_url: Option<&'a str>,
    /// `/status/{slug}/feed.atom` (served on custom domains too).
    pub feed_path: &'a str,
    /// Where the subscribe form posts (`None`: no form, a private page).
    pub subscribe_path: Option<&'a str>,
}

fn state_text(state: State) -> &'static str {
    match state {
        State::Up => "Operational",
        State::Degraded => "Degraded",
        State::Down => "Down",
        State::Pending => "No data yet",
        State::Paused => "Paused",
    }
}

fn time(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%d %H:%M UTC").to_string()
}

/// The whole page.
pub fn render(
    head: &PageHead<'_>,
    groups: &[GroupView],
    notices: &[NoticeView],
    maintenance: &[MaintenanceView],
) -> String {
    let overall = Overall::of(groups);
    let mut html = String::with_capacity(16 * 1024);
    let title = escape(head.title);
    let feed = escape(head.feed_path);
    let _ = write!(
        html,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>{title}</title><link rel=\"alternate\" type=\"application/atom+xml\" title=\"Notices\" href=\"{feed}\">\
         <style>{STYLE}</style></head><body><a class=\"skip\" href=\"#monitors\">Skip to the monitors</a><main><header>"
    );
    if let Some(logo) = head.logo_url {
        let _ = write!(html, "<img src=\"{}\" alt=\"\">", escape(logo));
    }
    let _ = write!(html, "<div><h1>{title}</h1>");
    if let Some(description) = head.description {
        let _ = write!(html, "<p class=\"muted\">{}</p>", escape(description));
    }
    let _ = write!(
        html,
        "</div></header><p class=\"overall {}\" id=\"overall\" data-state=\"{}\" role=\"status\">{}</p>",
        overall.class(),
        overall.class(),
        overall.text()
    );
    let (open, past): (Vec<&NoticeView>, Vec<&NoticeView>) =
        notices.iter().rev().partition(|n| !n.resolved);
    render_notices(&mut html, "notices", "Notices", &open);
    render_incidents(&mut html, groups);
    render_maintenance(&mut html, maintenance);
    // The skip link's target (focusable by it, not by Tab).
    html.push_str("<div id=\"monitors\" tabindex=\"-1\">");
    for group in groups {
        let _ = write!(html, "<section><h2>{}</h2>", escape(&group.name));
        for monitor in &group.monitors {
            render_monitor(&mut html, monitor);
        }
        html.push_str("</section>");
    }
    html.push_str("</div>");
    render_notices(&mut html, "history", "Past notices", &past);
    if let Some(path) = head.subscribe_path {
        render_subscribe_form(&mut html, path);
    }
    let _ = write!(
        html,
        "<footer class=\"muted\">Notices are also an <a href=\"{feed}\">Atom feed</a>. Uptime over the last 90 days, by day (UTC); response time over the last 24 hours.</footer>\
         </main></body></html>"
    );
    html
}

/// Notices, newest first, each with its updates newest first.
fn render_notices(html: &mut String, id: &str, heading: &str, notices: &[&NoticeView]) {
    if notices.is_empty() {
        return;
    }
    let _ = write!(
        html,
        "<section aria-labelledby=\"{id}\"><h2 id=\"{id}\">{heading}</h2>"
    );
    for notice in notices {
        let _ = write!(
            html,
            "<article class=\"card notice\" id=\"notice-{}\" data-state=\"{}\"><h3>{}</h3>",
            notice.id,
            escape(&notice.state),
            escape(&notice.title)
        );
        for update in notice.updates.iter().rev() {
            let _ = write!(
                html,
                "<p><strong>{}</strong> <span class=\"muted\">{}</span><br>{}</p>",
                escape(&capitalised(&update.state)),
                time(update.created_at),
                escape(&update.body).replace('\n', "<br>")
            );
        }
        html.push_str("</article>");
    }
    html.push_str("</section>");
}

/// `<time>` of an instant, machine-readable and shown in UTC.
fn time_element(at: DateTime<Utc>) -> String {
    format!(
        "<time datetime=\"{}\">{}</time>",
        at.format("%Y-%m-%dT%H:%M:%SZ"),
        time(at)
    )
}

/// Maintenance open now, then upcoming, soonest first: a name and its
/// times, nothing more.
fn render_maintenance(html: &mut String, maintenance: &[MaintenanceView]) {
    if maintenance.is_empty() {
        return;
    }
    html.push_str(
        "<section aria-labelledby=\"maintenance\"><h2 id=\"maintenance\">Scheduled maintenance</h2>",
    );
    for m in maintenance {
        let _ = write!(
            html,
            "<div class=\"card maintenance\" data-state=\"{}\"><span class=\"name\">{}</span> \
             <span class=\"muted\">{}</span><br>{} to {}</div>",
            if m.active { "active" } else { "upcoming" },
            escape(&m.name),
            if m.active { "In progress" } else { "Upcoming" },
            time_element(m.starts_at),
            time_element(m.ends_at)
        );
    }
    html.push_str("</section>");
}

/// A plain form (no script): the address goes to `path`, which answers
/// with a page saying a confirmation mail is on its way.
fn render_subscribe_form(html: &mut String, path: &str) {
    let _ = write!(
        html,
        "<section aria-labelledby=\"subscribe\"><h2 id=\"subscribe\">Get notices by email</h2>\
         <form class=\"card\" method=\"post\" action=\"{}\">\
         <label for=\"subscribe-email\">Email address</label> \
         <input id=\"subscribe-email\" name=\"email\" type=\"email\" required maxlength=\"254\" autocomplete=\"email\"> \
         <button type=\"submit\">Subscribe</button>\
         <p class=\"muted\">We send a link to confirm first; every mail has a link to unsubscribe.</p></form></section>",
        escape(path)
    );
}

fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

fn render_incidents(html: &mut String, groups: &[GroupView]) {
    let mut open: Vec<&MonitorView> = groups
        .iter()
        .flat_map(|g| g.monitors.iter().map(|m| m.as_ref()))
        .filter(|m| m.incident_since.is_some())
        .collect();
    open.sort_by_key(|m| (m.incident_since, m.id));
    open.dedup_by_key(|m| m.id);
    if open.is_empty() {
        return;
    }
    html.push_str(
        "<section aria-labelledby=\"incidents\"><h2 id=\"incidents\">Active incidents</h2>",
    );
    for monitor in open {
        let _ = write!(
            html,
            "<div class=\"card incident\"><span class=\"name\">{}</span> is down since {}</div>",
            escape(&monitor.name),
            monitor.incident_since.map(time).unwrap_or_default()
        );
    }
    html.push_str("</section>");
}

fn render_monitor(html: &mut String, monitor: &MonitorView) {
    let name = escape(&monitor.name);
    let state = monitor.state.as_str();
    let _ = write!(
        html,
        "<div class=\"card monitor\" data-monitor-id=\"{}\" data-state=\"{state}\"><div class=\"row\">\
         <span class=\"name\">{name}</span><span class=\"state {state}\"",
        monitor.id
    );
    if let Some(since) = monitor.state_since {
        let _ = write!(html, " title=\"since {}\"", time(since));
    }
    let _ = write!(html, ">{}</span></div>", state_text(monitor.state));
    // The bars are a picture of the figures below: hidden from assistive
    // technology and no tab stops (90 per monitor), each day's figure
    // shown on hover (`data-tip`) and given as text in the disclosure.
    html.push_str("<ol class=\"bars\" aria-hidden=\"true\">");
    let tips: Vec<(&str, String)> = monitor.bars.iter().map(bar_tip).collect();
    for (class, tip) in &tips {
        let _ = write!(html, "<li class=\"{class}\" data-tip=\"{tip}\"></li>");
    }
    // Narrow screens show the last 30 bars (STYLE): the scale says so.
    let figure =
        |uptime: Option<f64>| uptime.map(|u| format!("{} uptime", super::badge::format_percent(u)));
    html.push_str(
        "</ol><div class=\"scale muted\"><span><span class=\"wide\">90 days ago</span>\
         <span class=\"narrow\">30 days ago</span></span>",
    );
    let (wide, narrow) = (figure(monitor.uptime_90d), figure(monitor.uptime_30d));
    if wide.is_some() || narrow.is_some() {
        html.push_str("<span>");
        if let Some(wide) = wide {
            let _ = write!(html, "<span class=\"wide\">{wide}</span>");
        }
        if let Some(narrow) = narrow {
            let _ = write!(html, "<span class=\"narrow\">{narrow}</span>");
        }
        html.push_str("</span>");
    }
    html.push_str("<span>Today</span></div>");
    let _ = write!(
        html,
        "<details class=\"days\"><summary>Uptime by day<span class=\"visually-hidden\"> of {name}</span></summary><ol>"
    );
    for (_, tip) in tips.iter().rev() {
        let _ = write!(html, "<li>{tip}</li>");
    }
    html.push_str("</ol></details>");
    render_latency(html, monitor);
    html.push_str("</div>");
}

/// A day's bar: its class (colour) and its figure as text.
fn bar_tip(bar: &crate::model::DayBar) -> (&'static str, String) {
    match bar.percent() {
        None => ("none", format!("{}: no data", bar.day)),
        Some(p) => (
            if p >= 100.0 {
                "up"
            } else if p >= 99.0 {
                "minor"
            } else {
                "major"
            },
            format!("{}: {} up", bar.day, super::badge::format_percent(p)),
        ),
    }
}

/// The last day's hourly mean response times as a line (hours without
/// results are gaps).
fn render_latency(html: &mut String, monitor: &MonitorView) {
    let max = monitor
        .latency
        .iter()
        .flatten()
        .fold(0.0f64, |a, b| a.max(*b));
    let Some(mean) = monitor.response_24h else {
        html.push_str(
            "<p class=\"latency-caption muted\">Response time: no checks in the last 24 hours</p>",
        );
        return;
    };
    let summary = format!(
        "Response time over the last 24 hours: mean {} ms, highest hourly mean {} ms",
        mean.round(),
        max.round()
    );
    let _ = write!(
        html,
        "<p class=\"latency-caption muted\" aria-hidden=\"true\">Response time, last 24 hours: mean {} ms</p>\
         <svg class=\"latency\" viewBox=\"0 0 {} 100\" preserveAspectRatio=\"none\" role=\"img\" aria-label=\"{summary}\"><title>{summary}</title>",
        mean.round(),
        (LATENCY_HOURS - 1) * 10
    );
    // Runs of consecutive hours with results, each a polyline; an hour
    // alone (a new monitor, or one checked less than hourly) gets a short
    // flat mark, since a polyline of one point draws nothing.
    let width = ((LATENCY_HOURS - 1) * 10) as f64;
    let mut run: Vec<(f64, f64)> = Vec::new();
    let flush = |run: &mut Vec<(f64, f64)>, html: &mut String| {
        if let [(x, y)] = run[..] {
            let (from, to) = ((x - 3.0).max(0.0), (x + 3.0).min(width));
            *run = vec![(from, y), (to, y)];
        }
        if !run.is_empty() {
            let points: Vec<String> = run.iter().map(|(x, y)| format!("{x},{y:.1}")).collect();
            let _ = write!(html, "<polyline points=\"{}\"/>", points.join(" "));
        }
        run.clear();
    };
    for (i, point) in monitor.latency.iter().enumerate() {
        let x = (i * 10) as f64;
        match point {
            Some(ms) if max > 0.0 => run.push((x, 95.0 - 90.0 * ms / max)),
            Some(_) => run.push((x, 95.0)),
            None => flush(&mut run, html),
        }
    }
    flush(&mut run, html);
    html.push_str("</svg>");
}

/// The page for an unknown slug, a host without a page, or a private page
/// opened without its token (the same page: it does not tell which).
pub fn not_found() -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>Status page not found</title><style>{STYLE}</style></head><body><main>\
         <h1>Status page not found</h1><p class=\"muted\">There is no status page at this address. \
         Check the link you were given.</p></main></body></html>"
    )
}

#[cfg(test)]
#[path = "page_tests.rs"]
mod tests;
