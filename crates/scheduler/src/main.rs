//! `scheduler [serve]`: publishes due checks until SIGTERM.

uptime_ops::service_main!(
    "scheduler",
    "Uptime scheduler: publishes due checks and missed heartbeats",
    "Schedule checks while this replica holds the leader lock (the default).",
    scheduler::settings::SchedulerSettings,
    scheduler::run
);
