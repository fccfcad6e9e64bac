//! A sealed secret as a column value (`monitors.http_password_sealed`): text
//! made by `uptime-secrets` (`v1.<key id>.<base64url>`), which the database
//! stores and hands on but never opens.
//!
//! A type of its own rather than a `String` so that rows print it as
//! `[sealed]` in `Debug` (a row logged by mistake shows no ciphertext
//! either) and so that no plain text can be put where a sealed value goes
//! without saying so ([`SealedText::new`]).

use diesel::deserialize::{self, FromSql, FromSqlRow};
use diesel::expression::AsExpression;
use diesel::pg::{Pg, PgValue};
use diesel::serialize::{self, Output, ToSql};
use diesel::sql_types::Text;

/// A sealed secret, as stored.
#[derive(Clone, PartialEq, Eq, AsExpression, FromSqlRow)]
#[diesel(sql_type = Text)]
pub struct SealedText(String);

impl SealedText {
    /// `sealed` must be what `uptime_secrets::Keyring::seal` returned.
    pub fn new(sealed: String) -> Self {
        Self(sealed)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

impl std::fmt::Debug for SealedText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[sealed]")
    }
}

impl FromSql<Text, Pg> for SealedText {
    fn from_sql(bytes: PgValue<'_>) -> deserialize::Result<Self> {
        <String as FromSql<Text, Pg>>::from_sql(bytes).map(Self)
    }
}

impl ToSql<Text, Pg> for SealedText {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        <str as ToSql<Text, Pg>>::to_sql(&self.0, out)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn debug_shows_no_ciphertext() {
        let sealed = super::SealedText::new("v1.k1.q83vEjRWeJC7ze8S0Ykg3eP0mVo".into());
        assert_eq!(format!("{:?}", Some(sealed)), "Some([sealed])");
    }
}
