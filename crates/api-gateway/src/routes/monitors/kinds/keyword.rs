//! keyword monitors: an http check whose response body must contain (or
//! must not contain) a keyword. They take every http option besides
//! ([`super::http`]); here are the `keyword` and `keyword_type` fields,
//! their rules and columns.

use super::stored::Stored;
use crate::error::ApiError;
use crate::routes::monitors::monitor_type::MonitorType;
use crate::validation::Problems;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

const MAX_KEYWORD_BYTES: usize = 1024;

/// Whether the keyword must appear in the response body or must not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum KeywordType {
    Contains,
    NotContains,
}

impl KeywordType {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            KeywordType::Contains => uptime_contracts::KeywordType::Contains.as_str(),
            KeywordType::NotContains => uptime_contracts::KeywordType::NotContains.as_str(),
        }
    }

    pub(crate) fn from_db(s: &str) -> Result<Self, ApiError> {
        match uptime_contracts::KeywordType::parse(s) {
            Some(uptime_contracts::KeywordType::Contains) => Ok(Self::Contains),
            Some(uptime_contracts::KeywordType::NotContains) => Ok(Self::NotContains),
            None => Err(ApiError::Internal(format!(
                "keyword type {s:?} in the database"
            ))),
        }
    }
}

crate::routes::monitors::fields::api_fields! {
    /// The fields of a create request.
    #[derive(Debug, Default, Deserialize, ToSchema)]
    pub struct Create;
    /// The fields of a PATCH.
    #[derive(Debug, Default, Deserialize, ToSchema)]
    pub struct Update;
    /// The fields of a response (`null` on other kinds).
    #[derive(Debug, Default, Serialize, ToSchema)]
    pub struct Shown;


    /// Keyword monitors only (required there): 1 to 1024 bytes of UTF-8.
    keyword: opt String [min_length = 1, max_length = 1024],
        clear /// `null` clears it (not allowed on keyword monitors).
        => /// Keyword monitors only.
        Option<String>;
    /// Keyword monitors only: `contains` (default) or `not_contains`.
    keyword_type: opt KeywordType,
        clear /// `null` resets it to `contains` on keyword monitors.
        => /// Keyword monitors only.
        Option<KeywordType>;
}

/// The keyword being validated.
#[derive(Debug, Clone, Default)]
pub(crate) struct Draft {
    pub(crate) keyword: Option<String>,
    pub(crate) keyword_type: Option<KeywordType>,
}

impl Draft {
    /// A create's fields; a keyword monitor's type defaults to `contains`.
    pub(crate) fn from_create(kind: MonitorType, given: Create) -> Self {
        let keyword_type = match kind {
            MonitorType::Keyword => Some(given.keyword_type.unwrap_or(KeywordType::Contains)),
            _ => given.keyword_type,
        };
        Self {
            keyword: given.keyword,
            keyword_type,
        }
    }

    /// The stored keyword with `patch` applied, for a monitor of `kind`.
    pub(crate) fn merge(
        kind: MonitorType,
        stored: &Stored<'_>,
        patch: Update,
    ) -> Result<Self, ApiError> {
        if kind != MonitorType::Keyword {
            // Other types carry no keyword: the stored one goes, and only an
            // explicit value in this request is kept (to be refused).
            return Ok(Self {
                keyword: patch.keyword.flatten(),
                keyword_type: patch.keyword_type.flatten(),
            });
        }
        let keyword = patch
            .keyword
            .unwrap_or_else(|| stored.monitor.keyword.clone());
        let stored_type = stored
            .monitor
            .keyword_type
            .as_deref()
            .map(KeywordType::from_db)
            .transpose()?;
        let keyword_type = match patch.keyword_type {
            Some(given) => given,
            None => stored_type,
        };
        Ok(Self {
            keyword,
            keyword_type: Some(keyword_type.unwrap_or(KeywordType::Contains)),
        })
    }

    /// Checks the rules of a monitor of `kind`.
    pub(crate) fn validate(&self, kind: MonitorType, problems: &mut Problems) {
        match (kind, self.keyword.as_deref()) {
            (MonitorType::Keyword, None) => {
                problems.add("keyword", "is required for keyword monitors")
            }
            (MonitorType::Keyword, Some(k)) if k.is_empty() || k.len() > MAX_KEYWORD_BYTES => {
                problems.add(
                    "keyword",
                    format!("must be 1 to {MAX_KEYWORD_BYTES} bytes long"),
                )
            }
            (MonitorType::Keyword, Some(_)) | (_, None) => {}
            (_, Some(_)) => problems.add("keyword", "is only for keyword monitors"),
        }
        if kind != MonitorType::Keyword && self.keyword_type.is_some() {
            problems.add("keyword_type", "is only for keyword monitors");
        }
    }

    /// The `keyword` and `keyword_type` columns.
    pub(crate) fn store(self) -> (Option<String>, Option<String>) {
        (
            self.keyword,
            self.keyword_type.map(|k| k.as_str().to_string()),
        )
    }
}

/// What a response shows of a stored monitor.
pub(crate) fn shown(stored: &Stored<'_>) -> Result<Shown, ApiError> {
    Ok(Shown {
        keyword: stored.monitor.keyword.clone(),
        keyword_type: stored
            .monitor
            .keyword_type
            .as_deref()
            .map(KeywordType::from_db)
            .transpose()?,
    })
}
