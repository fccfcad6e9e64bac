#!/usr/bin/env bash
# supervise.sh NAME COMMAND...: runs a service of the local stack (`just up`)
# and starts it again whenever it exits, so that a crashed service (a panic
# ends the process: uptime_telemetry::panics) is back within seconds rather
# than silently gone. Between a crash and the restart it waits 1 s, doubling
# up to 30 s while the service keeps crashing; a run of a minute or more
# starts the wait at 1 s again. Each crash is logged into the service's log
# ($RUN/NAME.log) as an ERROR line with the exit code and the time.
#
# State in $RUN, for `just status` and `just down`:
#   NAME.pid        this supervisor (written by up.sh, which starts it)
#   NAME.child.pid  the running service
#   NAME.started    when the running service started (epoch seconds)
#   NAME.restarts   how many times it exited and was (or is about to be) started again
# SIGTERM (or SIGINT) stops the service (SIGTERM, then it drains as it does
# in production) and then this supervisor, without a restart.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

name="${1:?usage: supervise.sh NAME COMMAND...}"
shift
[ "$#" -gt 0 ] || die "usage: supervise.sh NAME COMMAND..."
log_file="$RUN/$name.log"
INITIAL_BACKOFF=1
MAX_BACKOFF=30
# A run at least this long counts as healthy: the next crash waits 1 s again.
STABLE_SECS=60

child=""
pause=""
stopping=0
on_stop() {
  stopping=1
  if [ -n "$child" ]; then kill -TERM "$child" 2>/dev/null || true; fi
  if [ -n "$pause" ]; then kill -TERM "$pause" 2>/dev/null || true; fi
}
trap on_stop TERM INT

note() { # note LEVEL MESSAGE: a line in the service's log, marked as the supervisor's
  printf '%s %s supervise.sh: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$1" "$2" >>"$log_file"
}

restarts=0
backoff=$INITIAL_BACKOFF
echo "$restarts" >"$RUN/$name.restarts"
while :; do
  started=$(date +%s)
  echo "$started" >"$RUN/$name.started"
  "$@" >>"$log_file" 2>&1 </dev/null &
  child=$!
  echo "$child" >"$RUN/$name.child.pid"
  # `wait` returns early when a trapped signal arrives; wait again until the
  # service itself has exited, and take its own exit status.
  code=0
  wait "$child" || code=$?
  while kill -0 "$child" 2>/dev/null; do
    code=0
    wait "$child" || code=$?
  done
  child=""
  rm -f "$RUN/$name.child.pid"
  if [ "$stopping" = 1 ]; then
    note INFO "$name stopped (exit code $code)"
    rm -f "$RUN/$name.started"
    exit 0
  fi
  ran=$(($(date +%s) - started))
  [ "$ran" -lt "$STABLE_SECS" ] || backoff=$INITIAL_BACKOFF
  how="exit code $code"
  [ "$code" -le 128 ] || how="exit code $code (signal $((code - 128)))"
  restarts=$((restarts + 1))
  # Counted at the crash: a service waiting to be restarted has restarted.
  echo "$restarts" >"$RUN/$name.restarts"
  note ERROR "$name exited with $how after ${ran}s; restart $restarts in ${backoff}s"
  rm -f "$RUN/$name.started"
  sleep "$backoff" &
  pause=$!
  wait "$pause" || true
  pause=""
  if [ "$stopping" = 1 ]; then
    note INFO "$name not restarted: the supervisor was stopped"
    exit 0
  fi
  backoff=$((backoff * 2 > MAX_BACKOFF ? MAX_BACKOFF : backoff * 2))
done
