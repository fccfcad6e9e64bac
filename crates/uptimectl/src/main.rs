//! `uptimectl`: see the crate documentation (`src/lib.rs`).

use clap::{CommandFactory, Parser, Subcommand};
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use uptimectl::apply::{self, ApplyOptions};
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
    /// List monitors, contacts, incidents, a monitor's results, maintenance
    /// windows, status pages or escalation policies.
    Get {
        #[command(subcommand)]
        what: GetWhat,
        /// Show at most this many.
        #[arg(long, global = true, default_value_t = 500)]
        limit: usize,
    },
    /// Show one resource in full, named by its id or its ref.
    Describe {
        #[command(subcommand)]
        what: DescribeWhat,
    },
    /// Check a monitor now and wait for its result.
    Check {
        /// The monitor's id or ref.
        monitor: String,
        /// Give up waiting after this many seconds.
        #[arg(long, default_value_t = 60)]
        timeout_secs: u64,
    },
    /// The organisation's usage and quotas.
    Usage,
    /// Make the organisation's resources what the files say: shows the
    /// plan as a diff, asks before deleting, applies. Exit 0 when applied
    /// or nothing to change, 2 when --dry-run plans changes, 1 on an error.
    Apply {
        #[command(flatten)]
        files: FilesArgs,
        /// Delete resources that carry a ref and are in none of the files.
        #[arg(long)]
        prune: bool,
        /// Delete without asking (needed to delete without a terminal).
        #[arg(long)]
        yes: bool,
        /// Only show the plan (as `plan` does).
        #[arg(long)]
        dry_run: bool,
    },
    /// Show what `apply` would change. Exit 0 when nothing, 2 when
    /// something, 1 on an error.
    Plan {
        #[command(flatten)]
        files: FilesArgs,
        /// Plan the deletions `apply --prune` would make.
        #[arg(long)]
        prune: bool,
    },
    /// Write every resource of the organisation as files `apply`
    /// reproduces: one per kind in DIR, or all to stdout. Secrets are
    /// written as `{from_env: UPTIME_SECRET_<KIND>_<REF>_<FIELD>}`.
    Export {
        /// The directory to write to (created if needed); without it, stdout.
        #[arg(short, long)]
        dir: Option<PathBuf>,
    },
    /// Print the JSON Schema of the resource files (for editors).
    Schema,
    /// Print a shell completion script (bash, zsh, fish, ...).
    Completions { shell: clap_complete::Shell },
}

#[derive(clap::Args)]
struct FilesArgs {
    /// A YAML or JSON file, or a directory read recursively.
    #[arg(short = 'f', long = "filename", required = true)]
    path: PathBuf,
}

/// What a command printed, and how the process ends.
struct Done {
    out: String,
    exit_code: u8,
}

impl From<String> for Done {
    fn from(out: String) -> Self {
        Done { out, exit_code: 0 }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli).await {
        Ok(Done { out, exit_code }) => {
            if !out.is_empty() {
                println!("{}", out.trim_end());
            }
            ExitCode::from(exit_code)
        }
        Err(error) => {
            eprintln!("uptimectl: {error:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> anyhow::Result<Done> {
    let given = Given {
        api_url: cli.api_url,
        api_key: cli.api_key,
        context: cli.context,
        config: cli.config,
    };
    let client = || -> anyhow::Result<Client> { Ok(given.resolve().map(Client::new)?) };
    let format = cli.output;
    Ok(match cli.command {
        Command::Tap {
            subject,
            nats,
            count,
        } => {
            uptimectl::tap::run(&nats, &subject, count).await?;
            String::new().into()
        }
        Command::Get { what, limit } => commands::get(&client()?, &what, limit, format)
            .await?
            .into(),
        Command::Describe { what } => commands::describe(&client()?, &what, format).await?.into(),
        Command::Check {
            monitor,
            timeout_secs,
        } => {
            let timeout = Duration::from_secs(timeout_secs);
            commands::check(&client()?, &monitor, timeout, format)
                .await?
                .into()
        }
        Command::Usage => commands::usage(&client()?, format).await?.into(),
        Command::Apply {
            files,
            prune,
            yes,
            dry_run,
        } => {
            let options = ApplyOptions {
                prune,
                yes,
                dry_run,
            };
            apply_files(&client, &files.path, options, format).await?
        }
        Command::Plan { files, prune } => {
            let options = ApplyOptions {
                prune,
                yes: false,
                dry_run: true,
            };
            apply_files(&client, &files.path, options, format).await?
        }
        Command::Export { dir } => {
            let exported = uptimectl::export::fetch(&client()?).await?;
            match dir {
                None => uptimectl::export::render_all(&exported).into(),
                Some(dir) => {
                    let written = uptimectl::export::write_dir(&dir, &exported)?;
                    eprintln!("wrote {}", written.join(", "));
                    String::new().into()
                }
            }
        }
        Command::Schema => uptimectl::resource_schema::SCHEMA_TEXT.to_string().into(),
        Command::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "uptimectl", &mut out);
            String::from_utf8_lossy(&out).into_owned().into()
        }
    })
}

/// `apply` and `plan`: the files are read (and refused whole) before the
/// key is even looked up; plans are printed as they come.
async fn apply_files(
    client: &dyn Fn() -> anyhow::Result<Client>,
    path: &std::path::Path,
    options: ApplyOptions,
    format: Format,
) -> anyhow::Result<Done> {
    let resources = uptimectl::resource_file::load_from_environment(path)?;
    let client = client()?;
    // A table shows the plan, then what was applied; JSON and YAML only
    // the last answer (one document for scripts).
    let mut show = |answer: &serde_json::Value, last: bool| {
        let text = match format {
            Format::Table => apply::render_plan(answer),
            _ if !last => return,
            other => uptimectl::output::render_one(answer, other),
        };
        println!("{}", text.trim_end());
    };
    let mut confirm = |question: &str| -> Option<bool> {
        let stdin = std::io::stdin();
        if !stdin.is_terminal() {
            return None;
        }
        eprint!("{question}");
        let _ = std::io::stderr().flush();
        let mut answer = String::new();
        stdin.lock().read_line(&mut answer).ok()?;
        Some(matches!(answer.trim(), "y" | "Y" | "yes" | "Yes"))
    };
    let ended = apply::run(&client, &resources, options, &mut show, &mut confirm).await?;
    Ok(Done {
        out: String::new(),
        exit_code: ended.exit_code(),
    })
}
