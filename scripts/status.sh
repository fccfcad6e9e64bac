#!/usr/bin/env bash
# `just status`: one line per service of the local stack (`just up`): up or
# down, how long the running process has run, how many times its supervisor
# restarted it (scripts/supervise.sh), and the last ERROR or panic line of
# its log. Exits 1 when a service is down.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
source "$REPO/scripts/stack-env.sh"

alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }
read_state() { [ -f "$RUN/$1" ] && cat "$RUN/$1" || true; }

duration() { # duration SECONDS: 3d04h, 2h05m, 4m12s, 9s
  local s="$1"
  if [ "$s" -ge 86400 ]; then printf '%dd%02dh' $((s / 86400)) $((s % 86400 / 3600))
  elif [ "$s" -ge 3600 ]; then printf '%dh%02dm' $((s / 3600)) $((s % 3600 / 60))
  elif [ "$s" -ge 60 ]; then printf '%dm%02ds' $((s / 60)) $((s % 60))
  else printf '%ds' "$s"; fi
}

last_error() { # last_error LOG: its last ERROR or panic line, colours stripped, shortened
  [ -f "$1" ] || { echo "-"; return; }
  local line
  line="$(grep -a -E 'ERROR|panicked' "$1" | tail -n 1 | sed -E 's/\x1b\[[0-9;]*m//g' || true)"
  [ -n "$line" ] || { echo "-"; return; }
  [ "${#line}" -le 200 ] || line="${line:0:197}..."
  echo "$line"
}

services=(api-gateway scheduler checker recorder notifier status-pages)
for f in "$RUN"/checker-*.pid; do
  case "$f" in *.child.pid) continue ;; esac
  if [ -e "$f" ]; then services+=("$(basename "$f" .pid)"); fi
done

now=$(date +%s)
down=0
printf '%-18s %-5s %-8s %-8s %s\n' SERVICE STATE UPTIME RESTARTS "LAST ERROR"
for svc in "${services[@]}"; do
  supervisor="$(read_state "$svc.pid")"
  child="$(read_state "$svc.child.pid")"
  started="$(read_state "$svc.started")"
  restarts="$(read_state "$svc.restarts")"
  state=down uptime=-
  # Down too: a supervisor waiting to restart its crashed service.
  if alive "$supervisor" && alive "$child"; then
    state=up
    [ -z "$started" ] || uptime="$(duration $((now - started)))"
  fi
  [ "$state" = up ] || down=1
  printf '%-18s %-5s %-8s %-8s %s\n' "$svc" "$state" "$uptime" "${restarts:--}" "$(last_error "$RUN/$svc.log")"
done
exit "$down"
