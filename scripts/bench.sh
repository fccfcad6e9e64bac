#!/usr/bin/env bash
# `just bench`: builds in release mode and prints throughput, lateness and
# memory figures, on a PostgreSQL cluster of its own and NATS servers it starts.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
"$REPO/scripts/install-deps.sh"
# The "million" stage's target (nginx, whose access log says when each check
# landed) and the probe it is compared with (blackbox_exporter), from Debian;
# nginx is also what the "status-pages" stage compares pages and badges with.
if [[ -z "${UPTIME_BENCH_ONLY:-}" || ",$UPTIME_BENCH_ONLY," == *,million,* || ",$UPTIME_BENCH_ONLY," == *,status-pages,* ]]; then
  command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || apt_install nginx-light
  [ -x /usr/bin/prometheus-blackbox-exporter ] || apt_install prometheus-blackbox-exporter \
    || log "prometheus-blackbox-exporter not installable: the million stage runs without the comparison"
fi
# The services run as processes of their own in the alert-latency stage, so a
# fault there is a real SIGKILL; the million and fairness stages run the
# api-gateway from its release binary too.
cargo build --release --quiet --manifest-path "$REPO/Cargo.toml" -p system-tests --bins \
  -p scheduler -p checker -p recorder -p notifier -p api-gateway

port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
cluster="bench-$$"
"$REPO/scripts/pg.sh" start "$cluster" "$port"
trap '"$REPO/scripts/pg.sh" destroy "$cluster"' EXIT

export UPTIME_TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$port/postgres"
export UPTIME_TEST_NATS_SERVER="$PY_TOOLS/bin/nats-server"
export RUST_LOG="${RUST_LOG:-warn}"
# For the alert-latency stage's PostgreSQL fault (an immediate stop, then a start).
export UPTIME_BENCH_PG_CLUSTER="$cluster" UPTIME_BENCH_PG_PORT="$port"
export UPTIME_BENCH_PG_SCRIPT="$REPO/scripts/pg.sh" UPTIME_BENCH_BIN_DIR="$REPO/target/release"
"$REPO/target/release/uptime-bench" "$@"
