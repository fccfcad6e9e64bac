#!/usr/bin/env bash
# `just soak` (and the last stage of `just test`): the README's own stack
# (scripts/up.sh, debug builds) on ports and in a state directory of its
# own, so it never meets a developer's `./dev up`, under a mixed workload
# of every feature for UPTIME_SOAK_SECS (600; shorter for development,
# at least 120); then its verdicts and figures (crates/system-tests,
# src/soak). Exits non-zero when any verdict failed.
#
# UPTIME_SOAK_PORT_BASE (57100): where the search for 20 free ports in a
# row starts. UPTIME_SOAK_KEEP=1 keeps the state directory (logs, up.log)
# after a passing run; a failing run always keeps it.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

"$REPO/scripts/install-deps.sh"
tools_local="$TOOLS_DIR"

# 20 free ports in a row: PostgreSQL, NATS and its monitoring, SMTP, the
# API, status pages, then the services' ops ports from +10.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && python3 -c "import socket,sys; s=socket.socket(); s.bind(('127.0.0.1', int(sys.argv[1])))" "$1" 2>/dev/null; }
base="${UPTIME_SOAK_PORT_BASE:-57100}"
while :; do
  ok=1
  for i in $(seq 0 19); do port_free $((base + i)) || { ok=0; break; }; done
  [ "$ok" = 1 ] && break
  base=$((base + 20))
  [ "$base" -lt 65000 ] || die "no 20 free ports in a row above ${UPTIME_SOAK_PORT_BASE:-57100}"
done
export UPTIME_LOCAL_PG_PORT=$base UPTIME_LOCAL_NATS_PORT=$((base + 1)) UPTIME_LOCAL_NATS_MONITOR_PORT=$((base + 2))
export UPTIME_LOCAL_SMTP_PORT=$((base + 3)) UPTIME_LOCAL_API_PORT=$((base + 4)) UPTIME_LOCAL_STATUS_PAGES_PORT=$((base + 5))
export UPTIME_LOCAL_OPS_PORT_BASE=$((base + 10)) UPTIME_LOCAL_NATS_ROUTE_PORT=$((base + 16))
# One NATS node, one region: the README's first command's stack.
unset UPTIME_LOCAL_NATS UPTIME_LOCAL_REGIONS UPTIME_LOCAL_RELEASE UPTIME_REGIONS__KNOWN UPTIME_REGIONS__DEFAULT

soak_local="$(mktemp -d /tmp/uptime-soak.XXXXXX)"
# The checkout's tools (nats-server, aiosmtpd), not a fresh download per
# run; a PostgreSQL cluster of this run's own.
export UPTIME_LOCAL_DIR="$soak_local" UPTIME_LOCAL_TOOLS_DIR="$tools_local" UPTIME_SOAK_REPO="$REPO"
export UPTIME_LOCAL_PG_CLUSTER="soak-$$"

cleanup() {
  local status=$?
  "$REPO/scripts/down.sh" >/dev/null 2>&1 || true
  if [ "$status" = 0 ] && [ "${UPTIME_SOAK_KEEP:-0}" != 1 ]; then
    "$REPO/scripts/pg.sh" destroy "$UPTIME_LOCAL_PG_CLUSTER" >/dev/null 2>&1 || true
    rm -rf "$soak_local"
  else
    log "the soak's state (service logs in run/, up.sh's output in soak/up.log): $soak_local"
    log "its database, stopped: UPTIME_LOCAL_DIR=$soak_local scripts/pg.sh start $UPTIME_LOCAL_PG_CLUSTER $UPTIME_LOCAL_PG_PORT (destroy: scripts/pg.sh destroy $UPTIME_LOCAL_PG_CLUSTER)"
  fi
  exit "$status"
}
trap cleanup EXIT

log "building the soak's driver"
cargo build --quiet --manifest-path "$REPO/Cargo.toml" -p system-tests --bin uptime-soak
log "soak: ports $base-$((base + 19)), state in $soak_local, ${UPTIME_SOAK_SECS:-600} s of workload"
"${CARGO_TARGET_DIR:-$REPO/target}/debug/uptime-soak"
