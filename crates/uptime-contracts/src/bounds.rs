//! The bounded numbers of a monitor definition, each range stated here
//! once: the api-gateway validates requests by them (naming the field, with
//! the same "must be between" message) and writes them as the OpenAPI
//! document's `minimum`/`maximum` ([`ALL`]); `uptime-db` stores and reads
//! them; the check spec carries them, so a checker trusts what it gets (a
//! timeout of at least one second, an HTTP status) without checking again.
//!
//! On the wire and in the database each is the plain integer it always
//! was (`u32`, `u16`; `integer` columns): the published schemas do not move.
//! Reading one outside its range fails, as a definition the API would refuse.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::ops::RangeInclusive;

/// A monitor field whose value lies in one inclusive range.
pub trait Bounded: Copy + Sized {
    /// Its JSON name in the API (and its column).
    const FIELD: &'static str;
    /// Its range, as the API states it.
    const RANGE: RangeInclusive<i64>;

    /// `value` when within [`Self::RANGE`].
    fn new(value: i64) -> Option<Self>;
}

/// A field's bounds, for the OpenAPI document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound {
    pub field: &'static str,
    pub min: i64,
    pub max: i64,
}

/// A value read outside its field's range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field} must be between {min} and {max}, not {value}")]
pub struct OutOfRange {
    pub field: &'static str,
    pub value: i64,
    pub min: i64,
    pub max: i64,
}

macro_rules! bounded {
    ($(
        $(#[$doc:meta])*
        $name:ident($repr:ty) = $field:literal, $min:literal ..= $max:literal;
    )+) => {
        $(
            $(#[$doc])*
            #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
            pub struct $name($repr);

            impl Serialize for $name {
                fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                    self.0.serialize(serializer)
                }
            }

            impl<'de> Deserialize<'de> for $name {
                fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                    let value = <$repr>::deserialize(deserializer)?;
                    Self::try_from(value).map_err(serde::de::Error::custom)
                }
            }

            impl $name {
                pub const MIN: $repr = $min;
                pub const MAX: $repr = $max;

                /// `value` when within range, usable in constants.
                pub const fn new(value: i64) -> Option<Self> {
                    if value >= $min && value <= $max {
                        Some(Self(value as $repr))
                    } else {
                        None
                    }
                }

                /// `value`, which a constant (a default, a test's) knows
                /// to be within range: out of range is a bug, caught at
                /// compile time in a `const`.
                pub const fn of(value: i64) -> Self {
                    match Self::new(value) {
                        Some(v) => v,
                        None => panic!(concat!($field, " out of range")),
                    }
                }

                pub const fn get(self) -> $repr {
                    self.0
                }
            }

            impl Bounded for $name {
                const FIELD: &'static str = $field;
                const RANGE: RangeInclusive<i64> = $min..=$max;

                fn new(value: i64) -> Option<Self> {
                    Self::new(value)
                }
            }

            impl TryFrom<i64> for $name {
                type Error = OutOfRange;
                fn try_from(value: i64) -> Result<Self, OutOfRange> {
                    Self::new(value).ok_or(OutOfRange { field: $field, value, min: $min, max: $max })
                }
            }

            impl TryFrom<i32> for $name {
                type Error = OutOfRange;
                fn try_from(value: i32) -> Result<Self, OutOfRange> {
                    Self::try_from(i64::from(value))
                }
            }

            impl TryFrom<$repr> for $name {
                type Error = OutOfRange;
                fn try_from(value: $repr) -> Result<Self, OutOfRange> {
                    Self::try_from(i64::from(value))
                }
            }

            impl From<$name> for $repr {
                fn from(v: $name) -> $repr {
                    v.0
                }
            }

            impl From<$name> for i32 {
                fn from(v: $name) -> i32 {
                    // Every range here fits an `i32`.
                    v.0 as i32
                }
            }

            impl From<$name> for i64 {
                fn from(v: $name) -> i64 {
                    i64::from(v.0)
                }
            }

            impl std::fmt::Display for $name {
                fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    self.0.fmt(f)
                }
            }

            // The schema of the integer it travels as: published schemas
            // that carry one do not change.
            impl JsonSchema for $name {
                fn is_referenceable() -> bool {
                    <$repr>::is_referenceable()
                }
                fn schema_name() -> String {
                    <$repr>::schema_name()
                }
                fn json_schema(gen: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
                    <$repr>::json_schema(gen)
                }
            }
        )+

        /// Every bounded field, for the OpenAPI document.
        pub const ALL: &[Bound] = &[$(Bound { field: $field, min: $min, max: $max }),+];
    };
}

bounded! {
    /// Seconds between checks.
    IntervalSecs(u32) = "interval_secs", 10..=86_400;
    /// Seconds before a check counts as failed (for heartbeats: the grace
    /// after a missed ping).
    TimeoutSecs(u32) = "timeout_secs", 1..=120;
    /// The HTTP status a passing http or keyword check's response has.
    ExpectedStatus(u16) = "expected_status", 100..=599;
    /// Consecutive failed rounds before a monitor is down.
    ConfirmationCount(u32) = "confirmation_count", 1..=10;
    /// Days before a certificate's expiry that warn.
    SslWarnDays(u32) = "ssl_warn_days", 0..=365;
    /// Milliseconds past which a passing check makes the monitor degraded.
    LatencyWarnMs(u32) = "latency_warn_ms", 1..=600_000;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_travel_as_their_integers_and_only_within_range() {
        let timeout: TimeoutSecs = serde_json::from_str("120").unwrap();
        assert_eq!(
            (timeout.get(), serde_json::to_string(&timeout).unwrap()),
            (120, "120".into())
        );
        for outside in ["0", "121", "-1"] {
            assert!(
                serde_json::from_str::<TimeoutSecs>(outside).is_err(),
                "{outside}"
            );
        }
        assert_eq!(SslWarnDays::new(0).map(SslWarnDays::get), Some(0));
        assert_eq!(
            ExpectedStatus::try_from(99),
            Err(OutOfRange {
                field: "expected_status",
                value: 99,
                min: 100,
                max: 599
            })
        );
        assert_eq!(
            ALL.iter()
                .find(|b| b.field == "timeout_secs")
                .map(|b| (b.min, b.max)),
            Some((1, 120))
        );
    }
}
