//! The cursors of results pages: where the last result of a page sits in the
//! pages' order, `(slot_at, id)`.

use crate::http::error::FieldError;
use chrono::{DateTime, TimeZone, Utc};
use uptime_db::results::ResultCursor;

/// Results cursors are unpadded base64url of 17 bytes: a version byte (1),
/// then the last result's `slot_at` (microseconds since 1970) and `id`, both
/// big-endian. So they start with `A` and never look like the `id:` cursors
/// of other lists (base64 `aWQ6...`), which results used before they were
/// partitioned. Clients must not build them; the encoding may change.
const RESULTS_CURSOR_VERSION: u8 = 1;
const RESULTS_CURSOR_BYTES: usize = 17;

/// The `next_cursor` after the result at `cursor`.
pub(super) fn encode_results_cursor(cursor: ResultCursor) -> String {
    use base64::Engine;
    let mut bytes = Vec::with_capacity(RESULTS_CURSOR_BYTES);
    bytes.push(RESULTS_CURSOR_VERSION);
    bytes.extend_from_slice(&cursor.slot_at.timestamp_micros().to_be_bytes());
    bytes.extend_from_slice(&cursor.id.to_be_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// A results page ends at a result's place (`crate::http::validation::split`).
impl crate::http::validation::Key for ResultCursor {
    fn encode(&self) -> String {
        encode_results_cursor(*self)
    }

    fn decode(text: &str) -> Option<Self> {
        decode_results_cursor(text).ok()
    }
}

/// Every string [`results_cursor_pattern`] matches decodes; a time outside
/// the years 1 to 9999 is clamped into them (no result is slotted out there,
/// and PostgreSQL cannot compare with every time chrono can hold).
pub(super) fn decode_results_cursor(text: &str) -> Result<ResultCursor, FieldError> {
    use base64::Engine;
    let decoded = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(text);
    let bytes =
        match decoded {
            Ok(b) if b.len() == RESULTS_CURSOR_BYTES && b[0] == RESULTS_CURSOR_VERSION => b,
            Ok(b) if b.starts_with(b"id:") => return Err(FieldError::new(
                "before",
                "is a cursor from before results were partitioned; request the first page again",
            )),
            _ => return Err(FieldError::new("before", "is not a cursor this API issued")),
        };
    let word = |at: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&bytes[at..at + 8]);
        i64::from_be_bytes(b)
    };
    let (micros, id) = (word(1), word(9));
    let earliest = Utc.with_ymd_and_hms(1, 1, 1, 0, 0, 0).unwrap();
    let latest = Utc.with_ymd_and_hms(9999, 12, 31, 0, 0, 0).unwrap();
    let slot_at = DateTime::from_timestamp_micros(micros)
        .unwrap_or(if micros < 0 { earliest } else { latest })
        .clamp(earliest, latest);
    Ok(ResultCursor { slot_at, id })
}

/// The JSON Schema `pattern` of exactly the strings [`decode_results_cursor`]
/// accepts: 23 base64url characters for 17 bytes, the first byte 1 (so `A`,
/// then one of `Q` to `f`: the character's top two bits are the byte's last
/// two, 01), the last character 2 bits of data and 4 zero bits.
pub const RESULTS_CURSOR_PATTERN: &str = "^A[Q-Za-f][A-Za-z0-9_-]{20}[AEIMQUYcgkosw048]$";

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `text` matches [`RESULTS_CURSOR_PATTERN`], read as the
    /// character classes it lists (the crate has no regex engine).
    fn matches_pattern(text: &str) -> bool {
        let chars: Vec<char> = text.chars().collect();
        let b64 = |c: &char| c.is_ascii_alphanumeric() || *c == '-' || *c == '_';
        chars.len() == 23
            && chars[0] == 'A'
            && (('Q'..='Z').contains(&chars[1]) || ('a'..='f').contains(&chars[1]))
            && chars[2..22].iter().all(b64)
            && "AEIMQUYcgkosw048".contains(chars[22])
    }

    #[test]
    fn the_pattern_lists_exactly_what_base64_makes_of_a_version_1_cursor() {
        use base64::Engine;
        assert_eq!(
            RESULTS_CURSOR_PATTERN,
            "^A[Q-Za-f][A-Za-z0-9_-]{20}[AEIMQUYcgkosw048]$"
        );
        let b64 = |bytes: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
        let mut seconds = std::collections::BTreeSet::new();
        let mut lasts = std::collections::BTreeSet::new();
        for byte in 0..=255u8 {
            let mut bytes = [0u8; 17];
            bytes[0] = 1;
            bytes[1] = byte;
            bytes[16] = byte;
            let text = b64(&bytes);
            seconds.insert(text.chars().nth(1).unwrap());
            lasts.insert(text.chars().last().unwrap());
        }
        let expected: std::collections::BTreeSet<char> = ('Q'..='Z').chain('a'..='f').collect();
        assert_eq!(seconds, expected);
        assert_eq!(lasts, "AEIMQUYcgkosw048".chars().collect());
    }

    #[test]
    fn results_cursors_round_trip() {
        let latest = Utc.with_ymd_and_hms(9999, 12, 31, 0, 0, 0).unwrap();
        for (slot_at, id) in [
            (
                Utc.with_ymd_and_hms(2026, 11, 22, 23, 59, 59).unwrap()
                    + chrono::Duration::microseconds(123_456),
                1,
            ),
            (DateTime::UNIX_EPOCH, 0),
            (Utc.with_ymd_and_hms(1, 1, 1, 0, 0, 0).unwrap(), i64::MAX),
            (latest, i64::MIN),
        ] {
            let cursor = ResultCursor { slot_at, id };
            let text = encode_results_cursor(cursor);
            assert!(matches_pattern(&text), "{text}");
            assert_eq!(decode_results_cursor(&text).ok(), Some(cursor), "{text}");
        }
    }

    #[test]
    fn every_string_of_the_pattern_decodes_and_nothing_else_does() {
        use base64::Engine;
        let b64 = |bytes: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
        // Every first byte: only version 1 is a cursor, and only it matches.
        for first in 0..=255u8 {
            let mut bytes = [0xa5u8; 17];
            bytes[0] = first;
            let text = b64(&bytes);
            assert_eq!(matches_pattern(&text), first == 1, "{text}");
            assert_eq!(decode_results_cursor(&text).is_ok(), first == 1, "{text}");
        }
        // Extreme words decode too: times beyond what chrono or PostgreSQL
        // hold are clamped, not refused.
        for second in ['Q', 'f'] {
            for fill in ['A', '_', 'g'] {
                for last in "AEIMQUYcgkosw048".chars() {
                    let text = format!("A{second}{}{last}", fill.to_string().repeat(20));
                    assert!(matches_pattern(&text), "{text}");
                    let cursor = decode_results_cursor(&text).expect(&text);
                    use chrono::Datelike;
                    assert!((1..=9999).contains(&cursor.slot_at.year()), "{text}");
                }
            }
        }
        for bad in [
            "",
            "A",
            "AQ",
            "nonsense",
            "1",
            "AQAAAAAAAAAAAAAAAAAAAAB",
            "AQAAAAAAAAAAAAAAAAAAAAAA",
        ] {
            assert!(!matches_pattern(bad), "{bad}");
            assert!(decode_results_cursor(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn cursors_of_before_partitioning_are_told_apart() {
        let old = crate::http::validation::encode_cursor(42);
        let err = decode_results_cursor(&old).unwrap_err();
        assert_eq!(err.field, "before");
        assert!(
            err.message.contains("request the first page again"),
            "{}",
            err.message
        );
        let err = decode_results_cursor("nonsense").unwrap_err();
        assert_eq!(err.message, "is not a cursor this API issued");
    }
}
