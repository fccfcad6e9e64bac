//! `uptimectl`: see the crate documentation (`src/lib.rs`).

use clap::{CommandFactory, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use uptimectl::client::Client;
use uptimectl::commands::{self, DescribeWhat, GetWhat};
use uptimectl::context::Given;
use uptimectl::output::Format;

#[derive(Parser)]
#[command(
    name = "uptimectl",
    version,
    about = "The uptime service's command line"
)]
struct Cli {
    /// The API's base URL (e.g. https://uptime.example.com).
    #[arg(long, global = true, env = "UPTIME_API_URL")]
    api_url: Option<String>,
    /// The API key.
    #[arg(long, global = true, env = "UPTIME_API_KEY", hide_env_values = true)]
    api_key: Option<String>,
    /// A context of the config file other than its current one.
    #[arg(long, global = true)]
    context: Option<String>,
    /// The config file (default: $UPTIMECTL_CONFIG, else
    /// ~/.config/uptimectl/config.yaml).
    #[arg(long, global = true)]
    config: Option<PathBuf>,
    /// How to print results.
    #[arg(short, long, global = true, value_enum, default_value = "table")]
    output: Format,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Show the messages on NATS subjects as they are published: each one
    /// pretty-printed, checked against its version's JSON Schema, with its
    /// trace id. Consumes nothing.
    Tap {
        /// The subject (wildcards `*` and `>` allowed): `uptime.>` is
        /// everything, `uptime.dead.>` the dead letters.
        #[arg(default_value = "uptime.>")]
        subject: String,
        /// The NATS server.
        #[arg(
            long,
            env = "UPTIME_NATS__URL",
            default_value = "nats://127.0.0.1:4222"
        )]
        nats: String,
        /// Stop after this many messages.
        #[arg(long)]
        count: Option<usize>,
    },
    /// List monitors, contacts, incidents or a monitor's results.
    Get {
        #[command(subcommand)]
        what: GetWhat,
        /// Show at most this many.
        #[arg(long, global = true, default_value_t = 500)]
        limit: usize,
    },
    /// Show one monitor, contact or incident in full.
    Describe {
        #[command(subcommand)]
        what: DescribeWhat,
    },
    /// Check a monitor now and wait for its result.
    Check {
        monitor: i64,
        /// Give up waiting after this many seconds.
        #[arg(long, default_value_t = 60)]
        timeout_secs: u64,
    },
    /// The organisation's usage and quotas.
    Usage,
    /// Print a shell completion script (bash, zsh, fish, ...).
    Completions { shell: clap_complete::Shell },
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli).await {
        Ok(out) => {
            if !out.is_empty() {
                println!("{}", out.trim_end());
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("uptimectl: {error:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> anyhow::Result<String> {
    let given = Given {
        api_url: cli.api_url,
        api_key: cli.api_key,
        context: cli.context,
        config: cli.config,
    };
    let client = || given.resolve().map(Client::new);
    Ok(match cli.command {
        Command::Tap {
            subject,
            nats,
            count,
        } => {
            uptimectl::tap::run(&nats, &subject, count).await?;
            String::new()
        }
        Command::Get { what, limit } => commands::get(&client()?, &what, limit, cli.output).await?,
        Command::Describe { what } => commands::describe(&client()?, &what, cli.output).await?,
        Command::Check {
            monitor,
            timeout_secs,
        } => {
            let timeout = Duration::from_secs(timeout_secs);
            commands::check(&client()?, monitor, timeout, cli.output).await?
        }
        Command::Usage => commands::usage(&client()?, cli.output).await?,
        Command::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "uptimectl", &mut out);
            String::from_utf8_lossy(&out).into_owned()
        }
    })
}
