//! The `apply` stage of `just bench`: monitoring as code at scale.
//! `monitors` monitor resources (10,000 by default,
//! `UPTIME_BENCH_APPLY_MONITORS`) are written to files, then read, planned
//! and applied through uptimectl's own code (the file loader with its
//! schema checks, and the apply request `uptimectl apply` sends) against a
//! real api-gateway on its own database; then planned again, when all are
//! unchanged. Prints the time of each step (aim: seconds).

use anyhow::Context;
use api_gateway::settings::GatewaySettings;
use api_gateway::startup::Application;
use std::fmt::Write as _;
use std::time::Instant;
use tokio_util::sync::CancellationToken;
use uptime_testkit::TestEnv;
use uptimectl::apply::{send, Counts};
use uptimectl::client::Client;
use uptimectl::context::Target;

/// How the stage is sized.
#[derive(Debug, Clone)]
pub struct ApplyBenchOptions {
    pub monitors: usize,
    /// Monitors per file (the set is a directory of files, as a repository
    /// would hold it).
    pub per_file: usize,
}

impl ApplyBenchOptions {
    pub fn from_env() -> Self {
        Self {
            monitors: crate::env_usize("UPTIME_BENCH_APPLY_MONITORS", 10_000),
            per_file: crate::env_usize("UPTIME_BENCH_APPLY_PER_FILE", 1_000).max(1),
        }
    }
}

pub async fn run(opts: ApplyBenchOptions) -> anyhow::Result<()> {
    println!("apply: {} monitors from files", opts.monitors);
    let env = TestEnv::start().await;
    let mut settings = GatewaySettings::default();
    settings.http.listen = "127.0.0.1:0".into();
    settings.database = env.db.settings();
    settings.nats = env.nats.settings();
    settings.rate_limit.per_second = 0;
    settings.secrets = uptime_testkit::secrets::test_secrets();
    let wanted = i64::try_from(opts.monitors)?;
    settings.quotas.monitors = settings.quotas.monitors.max(wanted);
    settings.quotas.checks_per_minute = settings.quotas.checks_per_minute.max(wanted);
    let app = Application::build(settings).await?;
    let api_url = format!("http://{}", app.addr());
    let (_, api_key) = api_gateway::keys::create_user_with_key(&app.state().pool, "apply-bench")
        .await
        .context("a user")?;
    let stop = CancellationToken::new();
    tokio::spawn(app.run_until(stop.clone()));
    let client = Client::new(Target { api_url, api_key });

    let dir = tempfile::tempdir()?;
    write_files(dir.path(), &opts)?;
    let started = Instant::now();
    let resources = uptimectl::resource_file::load_from_environment(dir.path())?;
    let read = started.elapsed();

    let started = Instant::now();
    let plan = send(&client, &resources, false, true).await?;
    let planned = started.elapsed();
    let counts = Counts::of(&plan);
    anyhow::ensure!(
        counts.create == opts.monitors,
        "the plan creates {} of {}",
        counts.create,
        opts.monitors
    );

    let started = Instant::now();
    send(&client, &resources, false, false).await?;
    let applied = started.elapsed();

    let started = Instant::now();
    let again = send(&client, &resources, false, true).await?;
    let replanned = started.elapsed();
    let counts = Counts::of(&again);
    anyhow::ensure!(
        counts.unchanged == opts.monitors && counts.changes() == 0,
        "the second plan is not all unchanged: {counts:?}"
    );
    stop.cancel();
    println!(
        "  read and checked the files: {:.2} s\n  plan (all create): {:.2} s\n  apply: {:.2} s ({:.0} monitors/s)\n  plan again (all unchanged): {:.2} s",
        read.as_secs_f64(),
        planned.as_secs_f64(),
        applied.as_secs_f64(),
        opts.monitors as f64 / applied.as_secs_f64(),
        replanned.as_secs_f64()
    );
    Ok(())
}

/// `per_file` http monitors a file, as a team would write them.
fn write_files(dir: &std::path::Path, opts: &ApplyBenchOptions) -> anyhow::Result<()> {
    let mut text = String::new();
    for index in 0..opts.monitors {
        let _ = write!(
            text,
            "---\nkind: Monitor\nref: service-{index:05}\nspec:\n  name: Service {index}\n  type: http\n  target: 'https://service-{index}.example.com/health'\n  interval_secs: 300\n  labels: {{team: team-{}}}\n",
            index % 50
        );
        if (index + 1) % opts.per_file == 0 || index + 1 == opts.monitors {
            let file = dir.join(format!("monitors-{:03}.yaml", index / opts.per_file));
            std::fs::write(file, std::mem::take(&mut text))?;
        }
    }
    Ok(())
}
