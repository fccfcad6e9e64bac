//! `checker [serve]`: runs due checks until SIGTERM.

/// Every check allocates (a request, its response, two JSON messages) on one
/// tokio worker and frees on another; glibc's allocator spent a tenth of the
/// checker's time on that under load (`malloc_consolidate`, `_int_malloc`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

uptime_ops::service_main!(
    "checker",
    "Uptime checker: runs due checks and publishes their results",
    "Run checks until SIGTERM or Ctrl-C (the default).",
    checker::settings::CheckerSettings,
    checker::run
);
