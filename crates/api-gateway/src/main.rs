//! `api-gateway serve | migrate | create-user --name NAME`

use anyhow::Context;
use api_gateway::{settings::GatewaySettings, startup::Application};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(about = "Uptime API gateway")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the REST API (the default).
    Serve,
    /// Apply pending database migrations and exit.
    Migrate,
    /// Create a user and print its first API key (alone on the last line).
    CreateUser {
        #[arg(long)]
        name: String,
    },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let settings: GatewaySettings = uptime_config::load().context("loading configuration")?;
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => {
            let _telemetry = uptime_telemetry::init("api-gateway", &settings.telemetry)?;
            let app = Application::build(settings).await?;
            tracing::info!(addr = %app.addr(), "api-gateway listening");
            app.run_until(uptime_ops::shutdown_token()).await?;
        }
        Command::Migrate => {
            let applied = uptime_db::migrate(&settings.database.url).await?;
            eprintln!(
                "applied {} migration(s): {}",
                applied.len(),
                applied.join(", ")
            );
        }
        Command::CreateUser { name } => {
            let pool = uptime_db::connect(&settings.database)?;
            let (user, raw_key) = api_gateway::keys::create_user_with_key(&pool, &name).await?;
            eprintln!(
                "created user {} ({}); its API key follows",
                user.id, user.name
            );
            println!("{raw_key}");
        }
    }
    Ok(())
}
