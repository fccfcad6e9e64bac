#!/usr/bin/env bash
# `just down`: stops what `just up` started. `--services-only` keeps
# PostgreSQL, NATS and the SMTP sink running (used by `just up` to restart).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
source "$REPO/scripts/stack-env.sh"

alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }

stop_pids() { # stop_pids SECONDS PID...: SIGTERM, wait up to SECONDS, then SIGKILL
  local limit="$1" pid waited=0 any
  shift
  for pid in "$@"; do kill -TERM "$pid" 2>/dev/null || true; done
  while [ "$waited" -lt $((limit * 5)) ]; do
    any=""
    for pid in "$@"; do alive "$pid" && any=1; done
    [ -n "$any" ] || return 0
    sleep 0.2
    waited=$((waited + 1))
  done
  for pid in "$@"; do kill -KILL "$pid" 2>/dev/null || true; done
}

stop_pid() { # stop_pid NAME: a process started by up.sh, without a supervisor
  local f="$RUN/$1.pid" pid
  [ -f "$f" ] || return 0
  pid="$(cat "$f")"
  if alive "$pid"; then stop_pids 10 "$pid"; fi
  rm -f "$f"
}

stop_service() { # stop_service NAME: its supervisor (which stops the service) and the service
  local supervisor="" child=""
  [ -f "$RUN/$1.pid" ] && supervisor="$(cat "$RUN/$1.pid")"
  [ -f "$RUN/$1.child.pid" ] && child="$(cat "$RUN/$1.child.pid")"
  if alive "$supervisor"; then
    # The supervisor passes SIGTERM on and waits for the service to drain
    # (the scheduler's publishes, the checks and deliveries in flight).
    stop_pids 20 "$supervisor"
  fi
  # A service left behind (its supervisor killed, or started before there
  # were supervisors: then NAME.pid was the service itself).
  if alive "$child"; then stop_pids 10 "$child"; fi
  rm -f "$RUN/$1.pid" "$RUN/$1.child.pid" "$RUN/$1.started" "$RUN/$1.restarts"
}

services=(api-gateway scheduler checker recorder notifier status-pages)
# A checker per region (UPTIME_LOCAL_REGIONS): checker-<region>.pid.
for f in "$RUN"/checker-*.pid; do
  case "$f" in *.child.pid) continue ;; esac
  if [ -e "$f" ]; then services+=("$(basename "$f" .pid)"); fi
done
# All at once: each drains on its own, in parallel.
for svc in "${services[@]}"; do stop_service "$svc" & done
wait
[ "${1:-}" = "--services-only" ] && exit 0
stop_pid smtp-sink
stop_pid nats-server
for i in 0 1 2; do stop_pid "nats-server-n$i"; done
"$REPO/scripts/pg.sh" stop "$PG_CLUSTER"
log "stopped"
