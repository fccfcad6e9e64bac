//! `api-gateway serve | migrate | create-user --name NAME |
//! set-quota --organisation ID_OR_NAME [--monitors N] [--alert-contacts N] [--api-keys N]
//! [--checks-per-minute N]`

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
    /// Create a user, owner of an organisation of their own (of the same
    /// id), and print its first API key (alone on the last line).
    CreateUser {
        #[arg(long)]
        name: String,
    },
    /// Override one organisation's quotas (the others keep theirs); prints
    /// its effective quotas.
    SetQuota {
        /// The organisation's id or (unique) name. `--user` is its former
        /// name: a user's own organisation has the user's id.
        #[arg(long, alias = "user")]
        organisation: String,
        #[arg(long)]
        monitors: Option<i64>,
        #[arg(long)]
        alert_contacts: Option<i64>,
        #[arg(long)]
        api_keys: Option<i64>,
        /// Checks per minute over the organisation's active monitors (each costs
        /// regions × 60 / interval_secs; heartbeats nothing).
        #[arg(long)]
        checks_per_minute: Option<i64>,
    },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let settings: GatewaySettings = uptime_config::load().context("loading configuration")?;
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => {
            let _telemetry = uptime_telemetry::init("api-gateway", &settings.telemetry)?;
            // A panic in any task ends the process, logged, for its supervisor to restart.
            uptime_telemetry::exit_on_panic("api-gateway");
            let app = Application::build(settings).await?;
            tracing::info!(addr = %app.addr(), ops = %app.ops_addr(), "api-gateway listening");
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
            let (user, raw_key) =
                api_gateway::access::keys::create_user_with_key(&pool, &name).await?;
            eprintln!(
                "created user {} ({}); its API key follows",
                user.id, user.name
            );
            println!("{raw_key}");
        }
        Command::SetQuota {
            organisation,
            monitors,
            alert_contacts,
            api_keys,
            checks_per_minute,
        } => {
            let pool = uptime_db::connect(&settings.database)?;
            let changes = uptime_db::quotas::QuotaOverrides {
                monitors,
                alert_contacts,
                api_keys,
                checks_per_minute,
            };
            let (organisation, effective) = api_gateway::quotas::set_for_organisation(
                &pool,
                &settings.quotas,
                &organisation,
                &changes,
            )
            .await?;
            println!(
                "quotas of organisation {} ({}):",
                organisation.id, organisation.name
            );
            for (name, limit) in effective {
                println!("  {name} {limit}");
            }
        }
    }
    Ok(())
}
