//! `uptimectl`: see the crate documentation (`src/lib.rs`).

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "uptimectl",
    version,
    about = "The uptime service's command line"
)]
struct Cli {
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
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Tap {
            subject,
            nats,
            count,
        } => uptimectl::tap::run(&nats, &subject, count).await,
    }
}
