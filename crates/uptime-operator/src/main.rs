//! `uptime-operator [serve]`: reconciles Monitor and AlertContact resources
//! until SIGTERM; `uptime-operator --print-crds`: prints the CRDs.

use anyhow::Context as _;

#[derive(clap::Parser)]
#[command(
    about = "Uptime operator: keeps Monitor and AlertContact custom resources applied to the uptime API"
)]
struct Cli {
    /// Print the CustomResourceDefinitions (YAML) and exit.
    #[arg(long)]
    print_crds: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Reconcile the custom resources (the default).
    Serve,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = <Cli as clap::Parser>::parse();
    if cli.print_crds {
        print!(
            "{}",
            uptime_operator::crds::all_crds_yaml().context("rendering the CRDs")?
        );
        return Ok(());
    }
    let settings: uptime_operator::settings::OperatorSettings =
        uptime_config::load().context("loading configuration")?;
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => {
            let _telemetry = uptime_telemetry::init("uptime-operator", &settings.telemetry)?;
            uptime_telemetry::exit_on_panic("uptime-operator");
            uptime_operator::run(settings, uptime_ops::shutdown_token())
                .await
                .context("uptime-operator failed")?;
        }
    }
    Ok(())
}
