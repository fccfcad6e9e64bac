//! `recorder [serve]`: records check results until SIGTERM.

uptime_ops::service_main!(
    "recorder",
    "Uptime recorder: stores check results and raises state-change events",
    "Record check results (the default).",
    recorder::settings::RecorderSettings,
    recorder::run
);
