//! The compiled `matches` patterns, kept per process so a monitor's
//! pattern is compiled once rather than at every check.
//!
//! A pattern is at most [`MAX_PATTERN_BYTES`] and compiles within
//! [`REGEX_SIZE_LIMIT`] (its lazy DFA's cache too), and the `regex` crate
//! matches in time linear in the text, so a pattern can neither stall a
//! check nor take more than about a MiB. The cache holds at most
//! [`REGEX_CACHE_ENTRIES`] patterns (least recently and frequently used
//! go first), so it holds no more than that many of those; a pattern that
//! does not compile is kept with its reason, as it would fail again.

use moka::sync::Cache;
use regex::{Regex, RegexBuilder};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::LazyLock;

/// Longest `matches` pattern accepted, in bytes (the API's bound too).
pub const MAX_PATTERN_BYTES: usize = uptime_contracts::ASSERTION_PATTERN_MAX_BYTES;
/// Compiled size limit of a `matches` pattern (and of its lazy DFA cache).
pub const REGEX_SIZE_LIMIT: usize = uptime_contracts::ASSERTION_REGEX_SIZE_LIMIT;
/// Compiled patterns kept per process: at most this many times
/// [`REGEX_SIZE_LIMIT`] even if every one were as large as allowed (real
/// patterns take a few KiB).
pub const REGEX_CACHE_ENTRIES: u64 = 64;

/// A compiled pattern, or why it does not compile.
pub(super) type Compiled = Result<Regex, String>;

/// The process's patterns.
static PATTERNS: LazyLock<Patterns> = LazyLock::new(|| Patterns::new(REGEX_CACHE_ENTRIES));

/// `pattern` compiled, from the process's cache when it is there.
pub(super) fn compiled(pattern: &str) -> Compiled {
    PATTERNS.get(pattern)
}

pub(super) struct Patterns {
    cache: Cache<String, Compiled>,
    /// Patterns compiled, for tests.
    compiles: AtomicU64,
}

impl Patterns {
    pub(super) fn new(entries: u64) -> Self {
        Self {
            cache: Cache::new(entries),
            compiles: AtomicU64::new(0),
        }
    }

    pub(super) fn get(&self, pattern: &str) -> Compiled {
        // Checked before the cache, so no key is longer than this.
        if pattern.len() > MAX_PATTERN_BYTES {
            return Err(format!(
                "regular expression longer than {MAX_PATTERN_BYTES} bytes"
            ));
        }
        self.cache.get_with_by_ref(pattern, || {
            self.compiles.fetch_add(1, Ordering::Relaxed);
            compile(pattern)
        })
    }

    #[cfg(test)]
    pub(super) fn compiles(&self) -> u64 {
        self.compiles.load(Ordering::Relaxed)
    }
}

fn compile(pattern: &str) -> Compiled {
    RegexBuilder::new(pattern)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| {
            // Syntax errors span lines (the pattern, a caret, the reason):
            // the last one says what is wrong.
            let text = e.to_string();
            let reason = text
                .lines()
                .rev()
                .find(|line| !line.trim().is_empty())
                .unwrap_or("")
                .trim();
            let reason = reason.strip_prefix("error: ").unwrap_or(reason);
            format!("invalid regular expression: {reason}")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_is_compiled_once_and_its_error_kept() {
        let patterns = Patterns::new(8);
        for _ in 0..3 {
            assert!(patterns.get(r"^2\.\d+").unwrap().is_match("2.4"));
            assert_eq!(
                patterns.get("(unclosed").unwrap_err(),
                "invalid regular expression: unclosed group"
            );
        }
        assert_eq!(patterns.compiles(), 2);
        // Too long: refused before compiling or caching.
        assert!(patterns.get(&"a".repeat(MAX_PATTERN_BYTES + 1)).is_err());
        assert_eq!(patterns.compiles(), 2);
    }

    #[test]
    fn the_cache_stays_within_its_entries() {
        let patterns = Patterns::new(4);
        for n in 0..50 {
            patterns.get(&format!("^{n}$")).unwrap();
        }
        patterns.cache.run_pending_tasks();
        assert!(
            patterns.cache.entry_count() <= 4,
            "{}",
            patterns.cache.entry_count()
        );
    }
}
