#!/usr/bin/env bash
# `just test`: formatting and lints, then every test against real PostgreSQL
# and real NATS JetStream.
# A throwaway PostgreSQL cluster serves this run only (each test clones its own
# database from a migrated template); each test starts its own nats-server.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
"$REPO/scripts/install-deps.sh"

port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
cluster="test-$$"
PG_FSYNC=off "$REPO/scripts/pg.sh" start "$cluster" "$port"
trap '"$REPO/scripts/pg.sh" destroy "$cluster"' EXIT

export UPTIME_TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$port/postgres"
export UPTIME_TEST_NATS_SERVER="$PY_TOOLS/bin/nats-server"
# The OpenAPI fuzzer crates/api-gateway/tests/fuzz.rs runs (install-deps.sh installs it).
export UPTIME_TEST_SCHEMATHESIS="$PY_TOOLS/bin/schemathesis"
cd "$REPO"
# The style bar CI holds every change to.
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --quiet -- -D warnings
# nextest runs each test in a process of its own, which the suite relies on
# (tests assert process-wide metrics); built once from crates.io into
# ~/.cargo/bin when the machine lacks it (`./dev up` does not need it).
if ! cargo nextest --version >/dev/null 2>&1; then
  log "installing cargo-nextest (built from crates.io, once)"
  cargo install --quiet --locked cargo-nextest || die "installing cargo-nextest failed"
fi
cargo nextest run --workspace --no-fail-fast --test-threads 6 "$@"
if [ -x "$REPO/scripts/test-deploy.sh" ]; then
  "$REPO/scripts/test-deploy.sh"
fi
# The README's own stack under every feature at once (UPTIME_SOAK_SECS,
# 600 by default), on ports and in a state directory of its own.
"$REPO/scripts/soak.sh"
