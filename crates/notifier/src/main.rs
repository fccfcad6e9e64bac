//! `notifier serve` (the default): delivers alerts until SIGTERM.

use anyhow::Context;
use clap::{Parser, Subcommand};
use notifier::settings::NotifierSettings;

#[derive(Parser)]
#[command(about = "Uptime notifier: delivers alerts by email, Slack and webhooks")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Deliver alerts (the default).
    Serve,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let settings: NotifierSettings = uptime_config::load().context("loading configuration")?;
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => {
            let _telemetry = uptime_telemetry::init("notifier", &settings.telemetry)?;
            notifier::run(settings, uptime_ops::shutdown_token()).await?;
        }
    }
    Ok(())
}
