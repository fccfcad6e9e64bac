//! "No panic and no unexpected ERROR line in any service log", pure: each
//! line of a service's log (pretty text, ANSI colours and all, or JSON) is
//! a panic, an ERROR, or neither; an ERROR the soak provokes on purpose is
//! allowed by the list below, each with the reason it is expected. Nothing
//! is allowed by default: an entry is added only with its reason.

/// An ERROR line that is expected, and why.
#[derive(Debug, Clone, Copy)]
pub struct Allowed {
    pub service: &'static str,
    /// A piece of the line that identifies it.
    pub contains: &'static str,
    pub reason: &'static str,
}

/// The ERROR lines the soak expects. None yet: every ERROR is a finding.
pub const ALLOWED: &[Allowed] = &[];

/// What one log held.
#[derive(Debug, Default, Clone)]
pub struct LogScan {
    pub lines: usize,
    pub panics: Vec<String>,
    /// ERROR lines no entry allows.
    pub errors: Vec<String>,
    /// ERROR lines allowed, counted per entry of the list.
    pub allowed: Vec<(usize, usize)>,
}

impl LogScan {
    pub fn clean(&self) -> bool {
        self.panics.is_empty() && self.errors.is_empty()
    }
}

/// `line` without ANSI escape sequences (`ESC [ ... letter`).
pub fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            chars.next();
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// Whether the line is an ERROR event: a JSON line's `level`, or a pretty
/// line's level (the word after the timestamp).
fn is_error(line: &str) -> bool {
    if line.starts_with('{') {
        return serde_json::from_str::<serde_json::Value>(line)
            .ok()
            .and_then(|v| {
                v.get("level")
                    .and_then(|l| l.as_str())
                    .map(|l| l.eq_ignore_ascii_case("error"))
            })
            .unwrap_or(false);
    }
    line.split_whitespace().nth(1) == Some("ERROR")
}

/// Lines kept per kind for the report at most.
const MAX_KEPT: usize = 20;

/// Scans the log `text` of `service`.
pub fn scan(service: &str, text: &str, allowed: &[Allowed]) -> LogScan {
    let mut scan = LogScan::default();
    let mut counts = vec![0usize; allowed.len()];
    for raw in text.lines() {
        scan.lines += 1;
        let line = strip_ansi(raw);
        // The standard hook's "panicked at", or the services' own hook
        // (`uptime_telemetry::panics`), which logs it as one ERROR line.
        if line.contains("panicked at") || line.contains("uptime_telemetry::panics") {
            if scan.panics.len() < MAX_KEPT {
                scan.panics.push(line.trim().to_string());
            }
            continue;
        }
        if !is_error(line.trim_start()) {
            continue;
        }
        match allowed
            .iter()
            .position(|a| a.service == service && line.contains(a.contains))
        {
            Some(i) => counts[i] += 1,
            None if scan.errors.len() < MAX_KEPT => scan.errors.push(line.trim().to_string()),
            None => {}
        }
    }
    scan.allowed = counts
        .into_iter()
        .enumerate()
        .filter(|(_, n)| *n > 0)
        .collect();
    scan
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRETTY_ERROR: &str =
        "\u{1b}[2m2026-11-28T10:00:00.123456Z\u{1b}[0m \u{1b}[31mERROR\u{1b}[0m \u{1b}[2mnotifier::worker\u{1b}[0m\u{1b}[2m:\u{1b}[0m delivery failed";

    #[test]
    fn pretty_and_json_errors_are_found_and_other_levels_are_not() {
        let text = format!(
            "{PRETTY_ERROR}\n2026-11-28T10:00:01Z  INFO scheduler: ERROR in a message is no level\n\
             {{\"level\":\"ERROR\",\"fields\":{{\"message\":\"x\"}}}}\n{{\"level\":\"WARN\"}}\n"
        );
        let scan = scan("notifier", &text, &[]);
        assert_eq!(scan.errors.len(), 2, "{scan:?}");
        assert_eq!(
            scan.errors[0],
            "2026-11-28T10:00:00.123456Z ERROR notifier::worker: delivery failed"
        );
        assert!(scan.panics.is_empty());
        assert_eq!(scan.lines, 4);
    }

    #[test]
    fn a_panic_logged_by_the_services_hook_is_a_panic() {
        let text = "\u{1b}[2m2026-12-02T01:51:20.072698Z\u{1b}[0m \u{1b}[31mERROR\u{1b}[0m \u{1b}[2muptime_telemetry::panics\u{1b}[0m\u{1b}[2m:\u{1b}[0m panicked; exiting so that a supervisor restarts the service";
        let scan = scan("scheduler", text, &[]);
        assert_eq!((scan.panics.len(), scan.errors.len()), (1, 0), "{scan:?}");
    }

    #[test]
    fn a_panic_is_found() {
        let text = "thread 'tokio-runtime-worker' panicked at crates/scheduler/src/core/planner.rs:182:9:\na read is still outstanding\n";
        let scan = scan("scheduler", text, &[]);
        assert_eq!(scan.panics.len(), 1);
        assert!(!scan.clean());
    }

    #[test]
    fn an_allowed_error_is_counted_not_reported_and_only_for_its_service() {
        let allowed = [Allowed {
            service: "notifier",
            contains: "delivery failed",
            reason: "a receiver refuses on purpose",
        }];
        let scan_n = scan("notifier", PRETTY_ERROR, &allowed);
        assert!(scan_n.clean());
        assert_eq!(scan_n.allowed, vec![(0, 1)]);
        assert!(!scan("recorder", PRETTY_ERROR, &allowed).clean());
    }
}
