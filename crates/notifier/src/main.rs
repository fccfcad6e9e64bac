//! `notifier [serve]`: delivers alerts until SIGTERM.

uptime_ops::service_main!(
    "notifier",
    "Uptime notifier: delivers alerts by email, Slack and webhooks",
    "Deliver alerts (the default).",
    notifier::settings::NotifierSettings,
    notifier::run
);
