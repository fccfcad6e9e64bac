//! `status-pages [serve]`: serves status pages and badges until SIGTERM.

uptime_ops::service_main!(
    "status-pages",
    "Uptime status pages: public pages and badges of chosen monitors",
    "Serve status pages and badges (the default).",
    status_pages::settings::StatusPagesSettings,
    status_pages::run
);
