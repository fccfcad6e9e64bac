//! What the contact list keeps: `type` and `search`, read as text and
//! parsed here so a bad value is a 400 naming its parameter.

use super::body::ContactType;
use crate::error::{ApiError, FieldError};
use crate::validation::check_search;
use serde::Deserialize;
use utoipa::IntoParams;

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ContactFilterQuery {
    /// Only contacts of this type.
    #[serde(rename = "type")]
    #[param(rename = "type", value_type = Option<ContactType>, inline)]
    pub contact_type: Option<String>,
    /// Only contacts whose name contains this, compared without case
    /// (1 to 100 characters; `%` and `_` are literal).
    #[param(min_length = 1, max_length = 100)]
    pub search: Option<String>,
}

/// [`ContactFilterQuery`] parsed, as the database takes it.
pub struct ContactFilter<'a> {
    pub kind: Option<&'static str>,
    pub name_contains: Option<&'a str>,
}

impl ContactFilterQuery {
    pub fn parse(&self) -> Result<ContactFilter<'_>, ApiError> {
        let mut problems = Vec::new();
        let kind = match self.contact_type.as_deref() {
            None => None,
            Some(text) => match ContactType::from_db(text) {
                Ok(kind) => Some(kind.as_str()),
                Err(_) => {
                    problems.push(FieldError::new(
                        "type",
                        "one of email, slack, webhook, pagerduty, opsgenie, teams, discord, telegram, ntfy, pushover",
                    ));
                    None
                }
            },
        };
        let search = check_search(self.search.as_deref(), &mut problems);
        if !problems.is_empty() {
            return Err(ApiError::InvalidQuery(problems));
        }
        Ok(ContactFilter {
            kind,
            name_contains: search,
        })
    }
}
