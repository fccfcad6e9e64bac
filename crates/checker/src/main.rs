//! `checker [serve]`

use anyhow::Context;
use checker::settings::CheckerSettings;
use clap::{Parser, Subcommand};

/// Every check allocates (a request, its response, two JSON messages) on one
/// tokio worker and frees on another; glibc's allocator spent a tenth of the
/// checker's time on that under load (`malloc_consolidate`, `_int_malloc`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(about = "Uptime checker: runs due checks and publishes their results")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run checks until SIGTERM or Ctrl-C (the default).
    Serve,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let settings: CheckerSettings = uptime_config::load().context("loading configuration")?;
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => {
            let _telemetry = uptime_telemetry::init("checker", &settings.telemetry)?;
            checker::run(settings, uptime_ops::shutdown_token())
                .await
                .context("checker failed")?;
        }
    }
    Ok(())
}
