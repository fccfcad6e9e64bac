#!/usr/bin/env bash
# `just down`: stops what `just up` started. `--services-only` keeps
# PostgreSQL, NATS and the SMTP sink running (used by `just up` to restart).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
source "$REPO/scripts/stack-env.sh"

stop_pid() { # stop_pid NAME: SIGTERM, wait up to 10 s, then SIGKILL
  local f="$RUN/$1.pid" pid
  [ -f "$f" ] || return 0
  pid="$(cat "$f")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

for svc in api-gateway scheduler checker recorder notifier status-pages; do stop_pid "$svc"; done
# A checker per region (UPTIME_LOCAL_REGIONS): checker-<region>.pid.
for f in "$RUN"/checker-*.pid; do
  if [ -e "$f" ]; then stop_pid "$(basename "$f" .pid)"; fi
done
[ "${1:-}" = "--services-only" ] && exit 0
stop_pid smtp-sink
stop_pid nats-server
for i in 0 1 2; do stop_pid "nats-server-n$i"; done
"$REPO/scripts/pg.sh" stop dev
log "stopped"
