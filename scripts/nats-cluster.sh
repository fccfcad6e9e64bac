#!/usr/bin/env bash
# `scripts/nats-cluster.sh start`: the local stack's three-node JetStream
# cluster (UPTIME_LOCAL_NATS=cluster just up), all on loopback: node i takes
# client port NATS_PORT+i, route port NATS_ROUTE_PORT+i, monitoring port
# NATS_MONITOR_PORT+i and its store in .local/nats-cluster/n<i>. Returns
# once a JetStream meta leader is elected. `kill N` SIGKILLs node N (a
# crash, for trying the stack under a fault); `start` brings it back.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
source "$REPO/scripts/stack-env.sh"

node_config() { # node_config I: writes node I's config, prints its path
  local i="$1" dir="$LOCAL/nats-cluster/n$1" routes="" j
  mkdir -p "$dir"
  for j in 0 1 2; do
    [ "$j" = "$i" ] || routes="${routes:+$routes, }\"nats-route://127.0.0.1:$((NATS_ROUTE_PORT + j))\""
  done
  cat >"$dir/nats.conf" <<CONF
server_name: n$i
listen: "127.0.0.1:$((NATS_PORT + i))"
http: "127.0.0.1:$((NATS_MONITOR_PORT + i))"
jetstream { store_dir: "$dir/js" }
cluster { name: uptime-local, listen: "127.0.0.1:$((NATS_ROUTE_PORT + i))", routes: [$routes] }
CONF
  echo "$dir/nats.conf"
}

start() {
  local i
  for i in 0 1 2; do
    if ! nc_ok 127.0.0.1 "$((NATS_PORT + i))"; then
      log "starting NATS cluster node n$i on 127.0.0.1:$((NATS_PORT + i))"
      nohup "$PY_TOOLS/bin/nats-server" -c "$(node_config "$i")" >"$RUN/nats-server-n$i.log" 2>&1 &
      echo $! >"$RUN/nats-server-n$i.pid"
    fi
  done
  log "waiting for the cluster's JetStream meta leader"
  for _ in $(seq 1 150); do
    for i in 0 1 2; do
      if curl -fsS "http://127.0.0.1:$((NATS_MONITOR_PORT + i))/jsz" 2>/dev/null | grep -q '"leader": *"n'; then
        return 0
      fi
    done
    sleep 0.2
  done
  die "the NATS cluster elected no leader within 30 s (logs: $RUN/nats-server-n*.log)"
}

case "${1:-start}" in
  start) start ;;
  kill)
    pid_file="$RUN/nats-server-n${2:?node number}.pid"
    [ -f "$pid_file" ] || die "node n$2 is not running"
    kill -KILL "$(cat "$pid_file")" && rm -f "$pid_file"
    log "killed node n$2 (start it again: scripts/nats-cluster.sh start)"
    ;;
  *) die "usage: scripts/nats-cluster.sh start|kill N" ;;
esac
