//! Badges in the flat shields.io style, laid out as badge-maker lays them
//! out: each text's width is the sum of its characters' advance widths in
//! Verdana at 11px (the table below), truncated and rounded up to an odd
//! number of pixels, plus 5 px of padding on each side. Pure: text in, SVG
//! out.

use super::escape;

/// Advance widths of the printable ASCII characters (U+0020 to U+007E) in
/// Verdana at 11px, in pixels: the metrics badge-maker measures with. Any
/// other character counts as wide as `@`, as badge-maker counts characters
/// it has no width for.
#[rustfmt::skip]
const VERDANA_11: [f32; 95] = [
    3.9, 4.3, 5.0, 9.0, 7.0, 12.0, 8.0, 3.0, 5.0, 5.0, 7.0, 9.0, 4.0, 5.0, 4.0, 5.0, // ' ' to '/'
    7.0, 7.0, 7.0, 7.0, 7.0, 7.0, 7.0, 7.0, 7.0, 7.0,                                // '0' to '9'
    5.0, 5.0, 9.0, 9.0, 9.0, 6.0, 11.0,                                              // ':' to '@'
    7.5, 7.5, 7.7, 8.5, 7.0, 6.3, 8.5, 8.3, 4.6, 5.0, 7.6, 6.1, 9.3,                 // 'A' to 'M'
    8.2, 8.7, 6.6, 8.7, 7.6, 7.5, 6.8, 8.1, 7.5, 11.0, 7.5, 6.8, 7.5,                // 'N' to 'Z'
    5.0, 5.0, 5.0, 9.0, 7.0, 7.0,                                                    // '[' to '`'
    6.6, 6.9, 5.7, 6.9, 6.6, 3.9, 6.9, 7.0, 3.0, 3.8, 6.5, 3.0, 11.0,                // 'a' to 'm'
    7.0, 6.7, 6.9, 6.9, 4.7, 5.7, 4.3, 7.0, 6.5, 9.0, 6.5, 6.5, 5.8,                 // 'n' to 'z'
    7.0, 5.0, 7.0, 9.0,                                                              // '{' to '~'
];

const AT_SIGN_WIDTH: f32 = 11.0;
const HORIZONTAL_PADDING: u32 = 5;
const HEIGHT: u32 = 20;
const LABEL_COLOUR: &str = "#555";

/// The width of `text` in Verdana 11px, in pixels.
pub fn text_width(text: &str) -> f32 {
    text.chars()
        .map(|c| match c as u32 {
            code @ 0x20..=0x7e => VERDANA_11[(code - 0x20) as usize],
            0..=0x1f => 0.0,
            _ => AT_SIGN_WIDTH,
        })
        .sum()
}

/// badge-maker's width of a text: truncated, then rounded up to odd (which
/// centres the text on the pixel grid).
pub fn preferred_width(text: &str) -> u32 {
    let width = text_width(text) as u32;
    if width & 1 == 0 {
        width + 1
    } else {
        width
    }
}

/// The colours badges use, by name as shields names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Colour {
    BrightGreen,
    Green,
    YellowGreen,
    Yellow,
    Orange,
    Red,
    LightGrey,
}

impl Colour {
    pub fn hex(self) -> &'static str {
        match self {
            Colour::BrightGreen => "#4c1",
            Colour::Green => "#97ca00",
            Colour::YellowGreen => "#a4a61d",
            Colour::Yellow => "#dfb317",
            Colour::Orange => "#fe7d37",
            Colour::Red => "#e05d44",
            Colour::LightGrey => "#9f9f9f",
        }
    }

    /// The name the shields.io endpoint schema takes.
    pub fn shields_name(self) -> &'static str {
        match self {
            Colour::BrightGreen => "brightgreen",
            Colour::Green => "green",
            Colour::YellowGreen => "yellowgreen",
            Colour::Yellow => "yellow",
            Colour::Orange => "orange",
            Colour::Red => "red",
            Colour::LightGrey => "lightgrey",
        }
    }
}

/// A flat badge: `label` on grey, `message` on `colour`.
pub fn flat(label: &str, message: &str, colour: Colour) -> String {
    let label_text = preferred_width(label);
    let message_text = preferred_width(message);
    let left = label_text + 2 * HORIZONTAL_PADDING;
    let right = message_text + 2 * HORIZONTAL_PADDING;
    let width = left + right;
    // Text is drawn at ten times the size and scaled down, as badge-maker
    // does, for sub-pixel positions in renderers that round coordinates.
    let label_x = 10 * left / 2;
    let message_x = 10 * left + 10 * right / 2;
    let (label, message) = (escape(label), escape(message));
    let colour = colour.hex();
    format!(
        concat!(
            r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{HEIGHT}" role="img" aria-label="{label}: {message}">"##,
            r##"<title>{label}: {message}</title>"##,
            r##"<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>"##,
            r##"<clipPath id="r"><rect width="{width}" height="{HEIGHT}" rx="3" fill="#fff"/></clipPath>"##,
            r##"<g clip-path="url(#r)"><rect width="{left}" height="{HEIGHT}" fill="{label_colour}"/><rect x="{left}" width="{right}" height="{HEIGHT}" fill="{colour}"/><rect width="{width}" height="{HEIGHT}" fill="url(#s)"/></g>"##,
            r##"<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" text-rendering="geometricPrecision" font-size="110">"##,
            r##"<text aria-hidden="true" x="{label_x}" y="150" fill="#010101" fill-opacity=".3" transform="scale(.1)" textLength="{label_len}">{label}</text>"##,
            r##"<text x="{label_x}" y="140" transform="scale(.1)" fill="#fff" textLength="{label_len}">{label}</text>"##,
            r##"<text aria-hidden="true" x="{message_x}" y="150" fill="#010101" fill-opacity=".3" transform="scale(.1)" textLength="{message_len}">{message}</text>"##,
            r##"<text x="{message_x}" y="140" transform="scale(.1)" fill="#fff" textLength="{message_len}">{message}</text>"##,
            r##"</g></svg>"##
        ),
        width = width,
        HEIGHT = HEIGHT,
        label = label,
        message = message,
        left = left,
        right = right,
        label_colour = LABEL_COLOUR,
        colour = colour,
        label_x = label_x,
        message_x = message_x,
        label_len = label_text * 10,
        message_len = message_text * 10,
    )
}

/// The shields.io endpoint JSON of a badge.
pub fn shields_endpoint(label: &str, message: &str, colour: Colour) -> String {
    serde_json::json!({
        "schemaVersion": 1,
        "label": label,
        "message": message,
        "color": colour.shields_name(),
    })
    .to_string()
}

/// An uptime percentage's colour, as uptime badges commonly grade it.
pub fn uptime_colour(percent: f64) -> Colour {
    match percent {
        p if p >= 99.9 => Colour::BrightGreen,
        p if p >= 99.0 => Colour::Green,
        p if p >= 97.0 => Colour::YellowGreen,
        p if p >= 95.0 => Colour::Yellow,
        p if p >= 90.0 => Colour::Orange,
        _ => Colour::Red,
    }
}

/// A mean response time's colour.
pub fn response_time_colour(ms: f64) -> Colour {
    match ms {
        m if m < 200.0 => Colour::BrightGreen,
        m if m < 500.0 => Colour::Green,
        m if m < 1000.0 => Colour::Yellow,
        m if m < 2000.0 => Colour::Orange,
        _ => Colour::Red,
    }
}

/// An uptime percentage as badges show it: two decimals below 100, and
/// never rounded up to 100 while anything was down.
pub fn format_percent(percent: f64) -> String {
    if percent >= 100.0 {
        "100%".into()
    } else {
        let floored = (percent * 100.0).floor() / 100.0;
        format!("{floored:.2}%")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_are_measured_like_badge_maker() {
        // "build" = 6.9 + 7 + 3 + 3 + 6.9 = 26.8 -> 26 -> odd 27.
        assert_eq!(preferred_width("build"), 27);
        assert_eq!(text_width("up"), 7.0 + 6.9);
        assert_eq!(preferred_width("up"), 13);
        // Characters without a width count as '@'.
        assert_eq!(text_width("é"), 11.0);
    }

    #[test]
    fn a_flat_badge_says_its_label_and_message_and_escapes_them() {
        let svg = flat("status", "up", Colour::BrightGreen);
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.contains("aria-label=\"status: up\""));
        assert!(svg.contains("fill=\"#4c1\""));
        // 10 + odd(status) + 10 + odd(up)
        let expected = 10 + preferred_width("status") + 10 + preferred_width("up");
        assert!(svg.contains(&format!("width=\"{expected}\"")), "{svg}");
        let odd = flat("a<b", "x&y", Colour::Red);
        assert!(odd.contains("a&lt;b") && odd.contains("x&amp;y") && !odd.contains("a<b"));
    }

    #[test]
    fn percentages_are_never_rounded_up_to_100() {
        assert_eq!(format_percent(99.999), "99.99%");
        assert_eq!(format_percent(100.0), "100%");
        assert_eq!(format_percent(12.345), "12.34%");
        assert_eq!(uptime_colour(99.95), Colour::BrightGreen);
        assert_eq!(uptime_colour(80.0), Colour::Red);
    }
}
