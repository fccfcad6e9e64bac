//! A monitor's `ref` ([`crate::refs`]): its stable, caller-chosen name,
//! unique among the organisation's monitors, immutable once set.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

crate::routes::monitors::fields::api_fields! {
    /// The field of a create request.
    #[derive(Debug, Default, Deserialize, ToSchema)]
    pub struct Create;
    /// The field of a PATCH.
    #[derive(Debug, Default, Deserialize, ToSchema)]
    pub struct Update;
    /// The field of a response.
    #[derive(Debug, Default, Serialize, ToSchema)]
    pub struct Shown;

    /// A stable name of the caller's choice (monitoring as code names the
    /// monitor by it): 1 to 255 of lowercase letters, digits, `.`, `_`, `-`,
    /// alphanumeric at both ends; unique among the organisation's monitors
    /// (`409` naming `ref` when taken) and immutable once set. Default: none.
    #[serde(rename = "ref")]
    #[schema(required = false)]
    ref_: opt String [min_length = 1, max_length = 255, pattern = "^[a-z0-9]([a-z0-9._-]{0,253}[a-z0-9])?$"],
        clear /// Sets the ref of a monitor that has none; repeating the current ref
        /// (or `null` while there is none) changes nothing; changing or
        /// removing a set ref is a `400` naming `ref`.
        #[serde(rename = "ref")]
        #[schema(required = false)]
        => /// The monitor's ref; `null` when it has none.
        #[serde(rename = "ref")]
        Option<String>;
}
