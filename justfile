# Uptime: `just up` runs everything locally, `just test` runs every test.
set shell := ["bash", "-euo", "pipefail", "-c"]

# List the recipes.
default:
    @just --list

# Install what is missing, start PostgreSQL, NATS and every service, print an API key.
up:
    scripts/up.sh

# Stop everything `just up` started.
down:
    scripts/down.sh

# Each service of `just up`: up or down, uptime, restarts, last error line.
status:
    scripts/status.sh

# Run every test against real PostgreSQL and NATS JetStream (installs what is missing).
test *ARGS:
    scripts/test.sh {{ARGS}}

# The README's stack under every feature at once for UPTIME_SOAK_SECS (600), on ports of its own; prints its figures.
soak:
    scripts/soak.sh

# Measure throughput, lateness and memory; prints the figures.
bench:
    scripts/bench.sh

# Show the NATS messages of the local stack as they pass: pretty-printed,
# checked against their JSON Schema, with trace ids (`just tap 'uptime.dead.>'`).
tap SUBJECT="uptime.>":
    cargo run --quiet -p uptimectl -- tap "{{SUBJECT}}" --nats "nats://127.0.0.1:${UPTIME_LOCAL_NATS_PORT:-4222}"

# Create a user on the local stack and print its API key on the last line.
create-user NAME:
    scripts/create-user.sh "{{NAME}}"

# Formatting and lints, as CI expects them.
lint:
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets -- -D warnings
