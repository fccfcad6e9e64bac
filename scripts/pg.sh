#!/usr/bin/env bash
# pg.sh start <name> <port> | stop <name> | crash <name> | destroy <name>
# A project-local PostgreSQL cluster with trust authentication on 127.0.0.1,
# run as the `postgres` user when we are root (PostgreSQL refuses root).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cmd="$1"; name="$2"; port="${3:-55432}"

if [ "$(id -u)" = 0 ]; then
  # Somewhere the postgres user can always reach, whatever the checkout's permissions.
  base="/tmp/uptime-pg-$(printf '%s' "$REPO" | sha1sum | cut -c1-10)"
  run_pg() { runuser -u postgres -- "$@"; }
else
  base="$LOCAL/pg"
  run_pg() { "$@"; }
fi
data="$base/$name"
bin="$(pg_bindir)"

case "$cmd" in
  start)
    mkdir -p "$base"; [ "$(id -u)" = 0 ] && chown postgres "$base"
    if [ ! -f "$data/PG_VERSION" ]; then
      run_pg "$bin/initdb" -D "$data" -U postgres --auth=trust -E UTF8 --no-locale >/dev/null
    fi
    if run_pg "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then exit 0; fi
    run_pg "$bin/pg_ctl" -D "$data" -w -t 30 -l "$data/server.log" \
      -o "-p $port -k $data -c listen_addresses=127.0.0.1 -c max_connections=400 -c fsync=${PG_FSYNC:-on} -c shared_buffers=256MB" start >/dev/null \
      || { tail -20 "$data/server.log" >&2; die "PostgreSQL did not start"; }
    ;;
  stop)
    [ -d "$data" ] && run_pg "$bin/pg_ctl" -D "$data" -m fast stop >/dev/null 2>&1 || true
    ;;
  crash) # an immediate stop, as a crash would leave it (recovery at the next start)
    [ -d "$data" ] && run_pg "$bin/pg_ctl" -D "$data" -m immediate stop >/dev/null 2>&1 || true
    ;;
  destroy)
    [ -d "$data" ] && { run_pg "$bin/pg_ctl" -D "$data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$data"; }
    ;;
  *) die "usage: pg.sh start|stop|crash|destroy NAME [PORT]" ;;
esac
