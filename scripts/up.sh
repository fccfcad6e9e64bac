#!/usr/bin/env bash
# `just up`: PostgreSQL, NATS with JetStream, an SMTP sink, migrations and every
# service, all on loopback; then a demo user whose API key is printed. Each
# service runs under scripts/supervise.sh, which restarts it when it exits
# (`just status` shows uptimes, restarts and last errors). Ports and the
# state directory move with UPTIME_LOCAL_* (scripts/stack-env.sh).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
source "$REPO/scripts/stack-env.sh"

"$REPO/scripts/install-deps.sh"
pip_tool aiosmtpd aiosmtpd
"$REPO/scripts/down.sh" --services-only

log "starting PostgreSQL on 127.0.0.1:$PG_PORT (cluster $PG_CLUSTER)"
"$REPO/scripts/pg.sh" start "$PG_CLUSTER" "$PG_PORT"
psql -h 127.0.0.1 -p "$PG_PORT" -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname='uptime'" | grep -q 1 \
  || psql -h 127.0.0.1 -p "$PG_PORT" -U postgres -qc "CREATE DATABASE uptime" >/dev/null

start_bg() { # start_bg NAME COMMAND...: runs in the background, logs to $RUN/NAME.log
  local name="$1"; shift
  nohup "$@" >"$RUN/$name.log" 2>&1 &
  echo $! >"$RUN/$name.pid"
}

start_service() { # start_service NAME COMMAND...: start_bg under the supervisor
  local name="$1"; shift
  rm -f "$RUN/$name.restarts" "$RUN/$name.started" "$RUN/$name.child.pid"
  start_bg "$name" "$REPO/scripts/supervise.sh" "$name" "$@"
}

if [ "$NATS_NODES" = 1 ]; then
  if ! nc_ok 127.0.0.1 "$NATS_PORT"; then
    log "starting NATS (JetStream) on 127.0.0.1:$NATS_PORT"
    mkdir -p "$LOCAL/nats"
    start_bg nats-server "$PY_TOOLS/bin/nats-server" -js -a 127.0.0.1 -p "$NATS_PORT" -m "$NATS_MONITOR_PORT" -sd "$LOCAL/nats"
  fi
else
  "$REPO/scripts/nats-cluster.sh" start
fi
if ! nc_ok 127.0.0.1 "$SMTP_PORT"; then
  log "starting an SMTP sink on 127.0.0.1:$SMTP_PORT (mail lands in $RUN/smtp-sink.log)"
  PYTHONPATH="$TOOLS_DIR/pip/aiosmtpd" start_bg smtp-sink python3 -m aiosmtpd -n -l "127.0.0.1:$SMTP_PORT"
fi

# The demo runs debug builds: they compile in a fraction of a release
# build's time, and `just test` (which builds its dependencies with the same
# dev profile) then reuses every dependency this built. A stack for figures:
# UPTIME_LOCAL_RELEASE=1 just up (`just bench` always builds release).
TARGET_DIR="${CARGO_TARGET_DIR:-$REPO/target}"
if [[ "${UPTIME_LOCAL_RELEASE:-0}" == 1 ]]; then
  PROFILE_ARGS=(--release) BIN="$TARGET_DIR/release"
else
  PROFILE_ARGS=() BIN="$TARGET_DIR/debug"
fi
log "building the services (${PROFILE_ARGS[*]:-debug})"
cargo build "${PROFILE_ARGS[@]}" --quiet --manifest-path "$REPO/Cargo.toml" \
  -p api-gateway -p scheduler -p checker -p recorder -p notifier -p status-pages -p uptimectl

log "migrating"
"$BIN/api-gateway" migrate

IFS=',' read -r -a regions <<<"$LOCAL_REGIONS"
for region in "${regions[@]}"; do
  [[ "$region" =~ ^[a-z0-9][a-z0-9-]{0,31}$ ]] \
    || die "UPTIME_LOCAL_REGIONS: '$region' is not a region name (a-z, 0-9, '-'; at most 32)"
done
for svc in scheduler checker recorder notifier; do
  ops="$(ops_port "$svc")"
  if [ "$svc" = checker ]; then
    # One checker per region: the first on the checker's ops port, the
    # others on the base + 10 and up.
    checker_ops=$((OPS_PORT_BASE + 10))
    for region in "${regions[@]}"; do
      name=checker; [ "$region" = default ] || name="checker-$region"
      port=$ops; [ "$region" = "${regions[0]}" ] || { port=$checker_ops; checker_ops=$((checker_ops + 1)); }
      UPTIME_OPS__LISTEN="127.0.0.1:$port" UPTIME_CHECKER__REGION="$region" \
        UPTIME_CHECKER__INSTANCE_ID="$name-local" start_service "$name" env "${SECRETS_ENV[@]}" "$BIN/checker" serve
      checker_ports="${checker_ports:+$checker_ports, }$name :$port"
    done
  elif [ "$svc" = notifier ]; then
    # The notifier opens alert contacts' provider credentials.
    UPTIME_OPS__LISTEN="127.0.0.1:$ops" start_service "$svc" env "${SECRETS_ENV[@]}" "$BIN/$svc" serve
  else
    UPTIME_OPS__LISTEN="127.0.0.1:$ops" start_service "$svc" "$BIN/$svc" serve
  fi
done
# Status pages and badges: their own service, reading PostgreSQL only.
UPTIME_OPS__LISTEN="127.0.0.1:$(ops_port status-pages)" UPTIME_STATUS_PAGES__LISTEN="127.0.0.1:$STATUS_PAGES_PORT" \
  start_service status-pages "$BIN/status-pages" serve
# The gateway's /metrics is on its own ops port, never on the API port.
UPTIME_OPS__LISTEN="127.0.0.1:$(ops_port api-gateway)" UPTIME_STATUS_PAGES__PUBLIC_BASE_URL="$STATUS_PAGES_URL" \
  start_service api-gateway env "${SECRETS_ENV[@]}" "$BIN/api-gateway" serve

log "waiting for the API at $API_URL"
for _ in $(seq 1 100); do
  curl -fsS "$API_URL/readyz" >/dev/null 2>&1 && break
  sleep 0.2
done
curl -fsS "$API_URL/readyz" >/dev/null || { tail -20 "$RUN/api-gateway.log"; die "the API did not become ready"; }

key="$("$BIN/api-gateway" create-user --name demo 2>/dev/null | tail -n 1)"
cat <<MSG

Everything is running, each service under a supervisor that restarts it
(logs in $RUN/; \`just status\` shows each service, its uptime, restarts and
last error; stop with \`just down\`).

  API            $API_URL   (OpenAPI: $API_URL/api/v1/openapi.json)
  Status pages   $STATUS_PAGES_URL/status/{slug}   (POST $API_URL/api/v1/status-pages)
  NATS           $UPTIME_NATS__URL   (tap it: just tap, or $BIN/uptimectl tap 'uptime.>'; UPTIME_LOCAL_NATS=cluster just up: three nodes, R3)
  PostgreSQL     $UPTIME_DATABASE__URL
  Mail (sink)    $RUN/smtp-sink.log
  Service ops    api-gateway :$(ops_port api-gateway), scheduler :$(ops_port scheduler), $checker_ports, recorder :$(ops_port recorder), notifier :$(ops_port notifier), status-pages :$(ops_port status-pages) (/healthz /readyz /metrics)
  Regions        $UPTIME_REGIONS__KNOWN (UPTIME_LOCAL_REGIONS="eu,us,ap" just up: one checker each)

Demo user's API key:
  $key

Try it:
  curl -s -X POST $API_URL/api/v1/monitors \\
    -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \\
    -d '{"name":"API itself","type":"http","target":"$API_URL/healthz","interval_secs":10}'
  curl -s $API_URL/api/v1/monitors -H "Authorization: Bearer $key"
MSG
