//! The page in a real Chromium as people use it: on a phone (the bars
//! shown are the days the scale names), by keyboard (a skip link, a few tab
//! stops, every day's figure as text) and its controls' contrast (WCAG
//! 1.4.11: 3:1 against the card) in the light and the dark scheme.

use super::cdp;
use crate::common::{spawn_with, Service};
use serde_json::{json, Value};

/// Per monitor: the bars shown, and the scale's text as shown.
const SHOWN_JS: &str = "[...document.querySelectorAll('.monitor')].map(m => [\
    [...m.querySelectorAll('ol.bars li')].filter(li => li.getClientRects().length > 0).length, \
    m.querySelector('.scale').innerText.replace(/\\s+/g, ' ')])";

/// Elements a Tab reaches, in document order.
const TAB_STOPS_JS: &str = "[...document.querySelectorAll('*')].filter(e => e.tabIndex >= 0 \
    && !e.disabled && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden')\
    .map(e => e.tagName.toLowerCase() + (e.className ? '.' + e.className : ''))";

/// The lowest WCAG contrast of the subscribe input's and button's borders
/// against the card they sit on.
const BORDER_CONTRAST_JS: &str = "(() => {\
    const rgb = s => s.match(/[\\d.]+/g).slice(0, 3).map(Number);\
    const lum = c => { const [r, g, b] = c.map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });\
      return 0.2126 * r + 0.7152 * g + 0.0722 * b; };\
    const ratio = (a, b) => { const [x, y] = [lum(rgb(a)), lum(rgb(b))].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };\
    const card = getComputedStyle(document.querySelector('form.card')).backgroundColor;\
    return Math.min(...['#subscribe-email', 'form.card button'].map(s => \
      ratio(getComputedStyle(document.querySelector(s)).borderTopColor, card)));\
  })()";

async fn a_page_of_three_monitors() -> (Service, String) {
    let service = spawn_with(|s| s.status_pages.refresh_ms = 200).await;
    let org = service.organisation("acme").await;
    let mut ids = Vec::new();
    for name in ["Website", "API", "Login"] {
        ids.push(service.monitor(org, name, "up", "{}").await);
    }
    // 40 days ago a bad day: the 90-day figure is not the 30-day one.
    service
        .sql(&format!(
            "INSERT INTO daily_uptime (monitor_id, day, total_checks, up_checks) \
             SELECT m, current_date - d, 1440, CASE WHEN d = 40 THEN 720 ELSE 1440 END \
             FROM unnest(ARRAY{ids:?}) m, generate_series(0, 89) d"
        ))
        .await;
    service
        .page(
            org,
            "acme",
            &format!(r#"[{{"name": "Services", "monitor_ids": {ids:?}}}]"#),
        )
        .await;
    service.refreshed().await;
    let url = service.url("/status/acme");
    (service, url)
}

async fn shown(browser: &mut cdp::Browser) -> Vec<(i64, String)> {
    let rows = browser.eval(SHOWN_JS).await;
    rows.as_array()
        .unwrap()
        .iter()
        .map(|r| (r[0].as_i64().unwrap(), r[1].as_str().unwrap().to_string()))
        .collect()
}

#[tokio::test]
async fn on_a_phone_the_scale_names_the_thirty_days_shown() {
    let (_service, url) = a_page_of_three_monitors().await;
    let mut browser = cdp::Browser::launch(1000, 900).await;
    browser.open(&url).await;
    for (bars, scale) in shown(&mut browser).await {
        assert_eq!(bars, 90, "{scale}");
        assert!(
            scale.contains("90 days ago") && scale.contains("99.44% uptime"),
            "{scale}"
        );
    }
    // A phone: 375 CSS pixels wide.
    browser
        .call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": 375, "height": 800, "deviceScaleFactor": 2, "mobile": true}),
        )
        .await;
    browser.open(&url).await;
    assert_eq!(browser.eval("window.innerWidth").await, 375);
    for (bars, scale) in shown(&mut browser).await {
        assert_eq!(bars, 30, "{scale}");
        assert!(
            scale.contains("30 days ago") && !scale.contains("90 days"),
            "{scale}"
        );
        assert!(
            scale.contains("100% uptime") && !scale.contains("99.44%"),
            "{scale}"
        );
    }
    assert!(
        browser
            .eval("document.documentElement.scrollWidth <= 375")
            .await
            == Value::Bool(true),
        "the page scrolls sideways on a phone"
    );
    assert!(browser.errors().is_empty(), "{:?}", browser.errors());
}

#[tokio::test]
async fn a_keyboard_reaches_everything_in_a_few_stops_from_a_skip_link() {
    let (_service, url) = a_page_of_three_monitors().await;
    let mut browser = cdp::Browser::launch(1000, 900).await;
    browser.open(&url).await;
    let stops = browser.eval(TAB_STOPS_JS).await;
    let stops: Vec<&str> = stops
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    // The skip link, a disclosure of daily figures per monitor, the
    // subscribe form's field and button, the feed link: not 90 per monitor.
    assert!(stops.len() <= 3 + 5, "{} tab stops: {stops:?}", stops.len());
    assert_eq!(stops.first(), Some(&"a.skip"), "{stops:?}");
    // The first Tab shows the skip link; following it lands on the monitors.
    for kind in ["keyDown", "keyUp"] {
        browser
            .call(
                "Input.dispatchKeyEvent",
                json!({"type": kind, "key": "Tab", "code": "Tab", "windowsVirtualKeyCode": 9}),
            )
            .await;
    }
    let focused = browser
        .eval(
            "(() => { const e = document.activeElement, r = e.getBoundingClientRect(); \
               return [e.className, r.width > 20 && r.height > 10 && r.top >= 0]; })()",
        )
        .await;
    assert_eq!(
        focused,
        json!(["skip", true]),
        "the skip link is focused and seen"
    );
    browser.eval("document.activeElement.click()").await;
    assert_eq!(browser.eval("location.hash").await, "#monitors");
    // Every day's figure is there as text, behind one tab stop per monitor.
    let figures = browser
        .eval("[...document.querySelectorAll('.monitor details.days li')].length")
        .await;
    assert_eq!(figures, 3 * 90);
    assert!(browser.errors().is_empty(), "{:?}", browser.errors());
}

#[tokio::test]
async fn the_subscribe_controls_borders_stand_out_from_their_card() {
    let (_service, url) = a_page_of_three_monitors().await;
    let mut browser = cdp::Browser::launch(1000, 900).await;
    for scheme in ["light", "dark"] {
        browser
            .call(
                "Emulation.setEmulatedMedia",
                json!({"features": [{"name": "prefers-color-scheme", "value": scheme}]}),
            )
            .await;
        browser.open(&url).await;
        let ratio = browser.eval(BORDER_CONTRAST_JS).await.as_f64().unwrap();
        assert!(
            ratio >= 3.0,
            "{scheme}: the borders are {ratio:.2}:1 against the card"
        );
    }
}
