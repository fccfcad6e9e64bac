//! The cache of built `GET /api/v1/metrics` pages (`routes::metrics`), held
//! by `AppState`: below both, so the state does not name a route.

use crate::settings::TenantMetricsSettings;
use std::time::Duration;

/// Built pages by organisation and key selector (its JSON text; empty:
/// none), since a key with a selector is shown only the monitors it
/// reaches. `Bytes`, so serving a cached page clones a reference count,
/// not the page.
pub type PageCache = moka::sync::Cache<(i64, String), actix_web::web::Bytes>;

/// An empty cache keeping each page `tenant_metrics.cache_secs`.
pub fn page_cache(settings: &TenantMetricsSettings) -> PageCache {
    moka::sync::Cache::builder()
        .max_capacity(settings.cache_capacity)
        .time_to_live(Duration::from_secs(settings.cache_secs.max(1)))
        .build()
}
