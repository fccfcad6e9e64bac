//! `recorder serve` (the default): records check results until SIGTERM.

use anyhow::Context;
use clap::{Parser, Subcommand};
use recorder::settings::RecorderSettings;

#[derive(Parser)]
#[command(about = "Uptime recorder: stores check results and raises state-change events")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Record check results (the default).
    Serve,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let settings: RecorderSettings = uptime_config::load().context("loading configuration")?;
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => {
            let _telemetry = uptime_telemetry::init("recorder", &settings.telemetry)?;
            recorder::run(settings, uptime_ops::shutdown_token()).await?;
        }
    }
    Ok(())
}
