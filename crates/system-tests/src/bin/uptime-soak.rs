//! `scripts/soak.sh`'s driver: the README's stack under every feature at
//! once for `UPTIME_SOAK_SECS` (600), then its verdicts (`system_tests::soak`).
//! Exits 1 when any verdict failed, 2 when the soak could not run.

#[tokio::main]
async fn main() {
    match system_tests::soak::run().await {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("soak: could not run: {e:#}");
            std::process::exit(2);
        }
    }
}
