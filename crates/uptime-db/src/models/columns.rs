//! The enum-like TEXT columns of `monitors` (`type`, `status`), read and
//! written as the enums of `uptime-contracts`, so a row comes out of the
//! database already typed and no service parses these strings again.
//!
//! Why a newtype per column here, and not diesel impls on the contracts'
//! enums or enums of our own:
//! - diesel's traits cannot be implemented for `MonitorKind` outside
//!   `uptime-contracts` (orphan rule). Implementing them there behind a
//!   `diesel` feature would make the wire contract depend on the database
//!   driver, and Cargo unifies features across a workspace build: the
//!   stateless checker, which must link no database driver, would get
//!   diesel through the contracts crate whenever it is built with the rest.
//! - Enums of our own in `uptime-db` would be a second copy of every kind and
//!   status, converted in every service: the duplication this replaces.
//!
//! So the row structs hold the contracts' enums, and these newtypes are only
//! the adapters diesel goes through (`#[diesel(deserialize_as = ...)]` and
//! `#[diesel(serialize_as = ...)]` on the fields). The stored strings are the
//! enums' `as_str()`, exactly the values the columns' CHECK constraints admit.
//! A value that is none of them (a constraint dropped, a hand-written row)
//! fails the query with [`UnknownValue`] (`monitors.type holds "ftp", which
//! is not one of ...`), never a panic or a silent default.

use diesel::deserialize::{self, FromSql, FromSqlRow};
use diesel::expression::AsExpression;
use diesel::pg::{Pg, PgValue};
use diesel::serialize::{self, Output, ToSql};
use diesel::sql_types::Text;
use std::borrow::Cow;
use uptime_contracts::{MonitorKind, MonitorStatus};

/// A column held a string that is none of its enum's values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("monitors.{column} holds {value:?}, which is not one of {expected}")]
pub struct UnknownValue {
    pub column: &'static str,
    pub value: String,
    /// The values the column may hold, for the message.
    pub expected: &'static str,
}

/// Declares the newtype of one enum-like TEXT column. It carries the stored
/// string: reading it cannot fail, and the conversion to the enum (which
/// diesel runs through `TryFrom` after the row is read) fails with an
/// [`UnknownValue`], which becomes the query's error as it is, so logs say
/// what was found, not just which field failed.
macro_rules! text_enum_column {
    ($(#[$doc:meta])* $name:ident($enum:ty), column = $column:literal, expected = $expected:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, AsExpression, FromSqlRow)]
        #[diesel(sql_type = Text)]
        pub struct $name(Cow<'static, str>);

        impl From<$enum> for $name {
            fn from(value: $enum) -> Self {
                Self(Cow::Borrowed(value.as_str()))
            }
        }

        impl TryFrom<$name> for $enum {
            type Error = UnknownValue;

            fn try_from(column: $name) -> Result<Self, UnknownValue> {
                <$enum>::parse(&column.0).ok_or_else(|| UnknownValue {
                    column: $column,
                    value: column.0.into_owned(),
                    expected: $expected,
                })
            }
        }

        impl FromSql<Text, Pg> for $name {
            fn from_sql(bytes: PgValue<'_>) -> deserialize::Result<Self> {
                let text = <String as FromSql<Text, Pg>>::from_sql(bytes)?;
                Ok(Self(Cow::Owned(text)))
            }
        }

        impl ToSql<Text, Pg> for $name {
            fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
                <str as ToSql<Text, Pg>>::to_sql(&self.0, out)
            }
        }
    };
}

text_enum_column!(
    /// `monitors.type` as a [`MonitorKind`].
    KindColumn(MonitorKind),
    column = "type",
    expected = "http, keyword, heartbeat"
);

text_enum_column!(
    /// `monitors.status` as a [`MonitorStatus`].
    StatusColumn(MonitorStatus),
    column = "status",
    expected = "pending, up, degraded, down"
);

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(value: &str) -> KindColumn {
        KindColumn(Cow::Owned(value.to_string()))
    }

    #[test]
    fn every_kind_and_status_reads_back_as_itself() {
        for kind in [
            MonitorKind::Http,
            MonitorKind::Keyword,
            MonitorKind::Heartbeat,
        ] {
            assert_eq!(KindColumn::from(kind).0, kind.as_str());
            assert_eq!(MonitorKind::try_from(stored(kind.as_str())), Ok(kind));
        }
        for status in [
            MonitorStatus::Pending,
            MonitorStatus::Up,
            MonitorStatus::Degraded,
            MonitorStatus::Down,
        ] {
            let column = StatusColumn(Cow::Owned(status.as_str().to_string()));
            assert_eq!(MonitorStatus::try_from(column), Ok(status));
        }
    }

    #[test]
    fn an_unknown_value_names_the_column_and_the_value() {
        let error = MonitorKind::try_from(stored("ftp")).unwrap_err();
        assert_eq!(
            error.to_string(),
            "monitors.type holds \"ftp\", which is not one of http, keyword, heartbeat"
        );
        let up = StatusColumn(Cow::Borrowed("Up"));
        assert!(
            MonitorStatus::try_from(up).is_err(),
            "values are case-sensitive"
        );
    }
}
