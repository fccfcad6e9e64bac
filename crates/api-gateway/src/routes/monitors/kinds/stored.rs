//! What the kinds read of a stored monitor when a PATCH is merged into it
//! or a response shows it.

use crate::error::ApiError;
use uptime_contracts::CheckOptions;
use uptime_db::models::Monitor;

/// A stored monitor as the kinds read it: the row and its check options.
pub(crate) struct Stored<'a> {
    pub(crate) monitor: &'a Monitor,
    pub(crate) options: CheckOptions,
}

impl<'a> Stored<'a> {
    pub(crate) fn of(monitor: &'a Monitor) -> Result<Self, ApiError> {
        let options = monitor.options().map_err(|e| {
            ApiError::Internal(format!(
                "monitor {} has unreadable check_options: {e}",
                monitor.id
            ))
        })?;
        Ok(Self { monitor, options })
    }
}

/// A PATCH field merged with the stored value: given (a value or `null`)
/// wins; left out keeps the stored value when the kind still uses it.
pub(crate) fn merged<T>(given: Option<Option<T>>, stored: Option<T>, applies: bool) -> Option<T> {
    match given {
        Some(given) => given,
        None if applies => stored,
        None => None,
    }
}
