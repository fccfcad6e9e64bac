//! Cursors of lists ordered newest first by a time and then a UUID (rounds:
//! `due_at`, `round_id`; deliveries: `created_at`, `id`): where the last item
//! of a page sits in that order.
//!
//! Unpadded base64url of 25 bytes: a version byte (2), the time
//! (microseconds since 1970, big-endian) and the UUID. Clients must not
//! build them; the encoding may change.

use crate::http::error::FieldError;
use chrono::{DateTime, TimeZone, Utc};
use uuid::Uuid;

/// Where an item sits: its time and its UUID.
pub type Position = (DateTime<Utc>, Uuid);

const VERSION: u8 = 2;
const BYTES: usize = 25;

/// The JSON Schema `pattern` of exactly the strings [`decode`] accepts:
/// 34 characters, the first byte 2 (`A`, then one of `g` to `v`), the last
/// character 2 bits of data and 4 zero bits.
pub const POSITION_CURSOR_PATTERN: &str = "^A[g-v][A-Za-z0-9_-]{31}[AQgw]$";

/// The `next_cursor` after the item at `(at, id)`.
pub fn encode(at: DateTime<Utc>, id: Uuid) -> String {
    use base64::Engine;
    let mut bytes = Vec::with_capacity(BYTES);
    bytes.push(VERSION);
    bytes.extend_from_slice(&at.timestamp_micros().to_be_bytes());
    bytes.extend_from_slice(id.as_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// The position in `text`, or a problem naming `field`. A time outside the
/// years 1 to 9999 is clamped into them (nothing is dated out there).
pub fn decode(text: &str, field: &str) -> Result<Position, FieldError> {
    use base64::Engine;
    let bytes = match base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(text) {
        Ok(b) if b.len() == BYTES && b[0] == VERSION => b,
        _ => return Err(FieldError::new(field, "is not a cursor this API issued")),
    };
    let mut micros = [0u8; 8];
    micros.copy_from_slice(&bytes[1..9]);
    let micros = i64::from_be_bytes(micros);
    let mut id = [0u8; 16];
    id.copy_from_slice(&bytes[9..]);
    let earliest = Utc.with_ymd_and_hms(1, 1, 1, 0, 0, 0).unwrap();
    let latest = Utc.with_ymd_and_hms(9999, 12, 31, 0, 0, 0).unwrap();
    let at = DateTime::from_timestamp_micros(micros)
        .unwrap_or(if micros < 0 { earliest } else { latest })
        .clamp(earliest, latest);
    Ok((at, Uuid::from_bytes(id)))
}

impl super::Key for Position {
    fn encode(&self) -> String {
        encode(self.0, self.1)
    }

    fn decode(text: &str) -> Option<Self> {
        decode(text, "cursor").ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `text` matches [`POSITION_CURSOR_PATTERN`], read as the
    /// character classes it lists.
    fn matches_pattern(text: &str) -> bool {
        let chars: Vec<char> = text.chars().collect();
        let b64 = |c: &char| c.is_ascii_alphanumeric() || *c == '-' || *c == '_';
        chars.len() == 34
            && chars[0] == 'A'
            && ('g'..='v').contains(&chars[1])
            && chars[2..33].iter().all(b64)
            && "AQgw".contains(chars[33])
    }

    #[test]
    fn positions_round_trip_and_match_the_pattern() {
        let at = Utc.with_ymd_and_hms(2026, 11, 22, 10, 15, 0).unwrap()
            + chrono::Duration::microseconds(123_456);
        for id in [Uuid::nil(), Uuid::max(), Uuid::from_u128(0x1234_5678)] {
            let text = encode(at, id);
            assert!(matches_pattern(&text), "{text}");
            assert_eq!(decode(&text, "cursor").unwrap(), (at, id));
        }
    }

    #[test]
    fn every_string_of_the_pattern_decodes_and_nothing_else_does() {
        for second in ['g', 'v'] {
            for last in "AQgw".chars() {
                for fill in ['A', '_', 'z'] {
                    let text = format!("A{second}{}{last}", fill.to_string().repeat(31));
                    assert!(matches_pattern(&text), "{text}");
                    assert!(decode(&text, "cursor").is_ok(), "{text}");
                }
            }
        }
        let other_lists = crate::http::validation::encode_cursor(42);
        for bad in [
            "",
            "nonsense",
            "AgAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAB",
            &other_lists,
        ] {
            assert!(!matches_pattern(bad), "{bad}");
            let err = decode(bad, "cursor").unwrap_err();
            assert_eq!(err.field, "cursor");
        }
    }
}
