//! `scheduler [serve]`

use anyhow::Context;
use clap::{Parser, Subcommand};
use scheduler::settings::SchedulerSettings;

#[derive(Parser)]
#[command(about = "Uptime scheduler: publishes due checks and missed heartbeats")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Schedule checks while this replica holds the leader lock (the default).
    Serve,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let settings: SchedulerSettings = uptime_config::load().context("loading configuration")?;
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => {
            let _telemetry = uptime_telemetry::init("scheduler", &settings.telemetry)?;
            scheduler::run(settings, uptime_ops::shutdown_token()).await?;
        }
    }
    Ok(())
}
