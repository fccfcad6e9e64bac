# Addresses and configuration of the local stack (`just up`), as UPTIME_*
# variables the services read. Source after common.sh.
#
# Every port can be moved, so a second stack (UPTIME_LOCAL_DIR=another
# directory) runs beside the first: UPTIME_LOCAL_{PG,NATS,NATS_MONITOR,
# NATS_ROUTE,SMTP,API,STATUS_PAGES}_PORT and UPTIME_LOCAL_OPS_PORT_BASE (the
# services' ops ports: api-gateway at the base, scheduler +1, checker +2,
# recorder +3, notifier +4, status-pages +5, the checkers of further
# regions +10 and up).
PG_PORT="${UPTIME_LOCAL_PG_PORT:-55432}"
NATS_PORT="${UPTIME_LOCAL_NATS_PORT:-4222}"
NATS_MONITOR_PORT="${UPTIME_LOCAL_NATS_MONITOR_PORT:-8222}"
SMTP_PORT="${UPTIME_LOCAL_SMTP_PORT:-2525}"
API_PORT="${UPTIME_LOCAL_API_PORT:-8080}"
API_URL="http://127.0.0.1:$API_PORT"
STATUS_PAGES_PORT="${UPTIME_LOCAL_STATUS_PAGES_PORT:-8090}"
STATUS_PAGES_URL="http://127.0.0.1:$STATUS_PAGES_PORT"
OPS_PORT_BASE="${UPTIME_LOCAL_OPS_PORT_BASE:-9100}"
ops_port() { # ops_port SERVICE: its ops listener's port
  case "$1" in
    api-gateway) echo "$OPS_PORT_BASE" ;;
    scheduler) echo $((OPS_PORT_BASE + 1)) ;;
    checker) echo $((OPS_PORT_BASE + 2)) ;;
    recorder) echo $((OPS_PORT_BASE + 3)) ;;
    notifier) echo $((OPS_PORT_BASE + 4)) ;;
    status-pages) echo $((OPS_PORT_BASE + 5)) ;;
    *) die "no ops port for $1" ;;
  esac
}
# The PostgreSQL cluster (scripts/pg.sh): `dev` for the checkout's own
# stack, one of its own for a stack in another UPTIME_LOCAL_DIR (the
# clusters of a root user all live in one directory per checkout).
if [ -n "${UPTIME_LOCAL_PG_CLUSTER:-}" ]; then
  PG_CLUSTER="$UPTIME_LOCAL_PG_CLUSTER"
elif [ "$LOCAL" = "$REPO/.local" ]; then
  PG_CLUSTER=dev
else
  PG_CLUSTER="dev-$(printf '%s' "$LOCAL" | sha1sum | cut -c1-10)"
fi

export UPTIME_DATABASE__URL="postgres://postgres@127.0.0.1:$PG_PORT/uptime"
export UPTIME_NATS__URL="nats://127.0.0.1:$NATS_PORT"
# NATS: one JetStream server, or with UPTIME_LOCAL_NATS=cluster three nodes
# of one cluster on loopback (clients on NATS_PORT and the two ports after
# it, routes on NATS_ROUTE_PORT and up, monitoring on NATS_MONITOR_PORT and
# up), every stream and KV bucket then replicated on all three (R3).
LOCAL_NATS="${UPTIME_LOCAL_NATS:-single}"
NATS_ROUTE_PORT="${UPTIME_LOCAL_NATS_ROUTE_PORT:-6222}"
NATS_NODES=1
if [ "$LOCAL_NATS" = cluster ]; then
  NATS_NODES=3
  nats_urls=""
  for i in 0 1 2; do nats_urls="${nats_urls:+$nats_urls,}nats://127.0.0.1:$((NATS_PORT + i))"; done
  export UPTIME_NATS__URL="$nats_urls"
  export UPTIME_NATS__STREAM_REPLICAS="${UPTIME_NATS__STREAM_REPLICAS:-3}"
elif [ "$LOCAL_NATS" != single ]; then
  echo "UPTIME_LOCAL_NATS: '$LOCAL_NATS' is neither 'single' nor 'cluster'" >&2
  exit 1
fi
export UPTIME_HTTP__LISTEN="127.0.0.1:$API_PORT"
export UPTIME_HTTP__PUBLIC_BASE_URL="$API_URL"
export UPTIME_TELEMETRY__LOG_FORMAT="${UPTIME_TELEMETRY__LOG_FORMAT:-pretty}"
# Local development watches local things; production refuses private targets.
export UPTIME_SAFETY__ALLOW_PRIVATE_TARGETS=true
export UPTIME_SMTP__HOST=127.0.0.1
export UPTIME_SMTP__PORT="$SMTP_PORT"
export UPTIME_SMTP__TLS=none
export UPTIME_SMTP__FROM="uptime@localhost"

# Regions: UPTIME_LOCAL_REGIONS="eu,us,ap" runs one checker per named region
# (scripts/up.sh) and makes them the known and default regions, so a new
# monitor is checked from all of them; unset, one checker in "default".
# UPTIME_REGIONS__KNOWN/DEFAULT set before `just up` win.
LOCAL_REGIONS="${UPTIME_LOCAL_REGIONS:-default}"
LOCAL_REGIONS="${LOCAL_REGIONS// /}"
export UPTIME_REGIONS__KNOWN="${UPTIME_REGIONS__KNOWN:-$LOCAL_REGIONS}"
export UPTIME_REGIONS__DEFAULT="${UPTIME_REGIONS__DEFAULT:-$LOCAL_REGIONS}"

# The key basic-auth passwords are sealed with (issue 19): made once per
# checkout into .local (never committed; losing it loses the stored
# passwords), and given to the api-gateway and the checkers only
# (scripts/up.sh). UPTIME_SECRETS__* set before `just up` are kept as well.
SECRETS_KEY_FILE="$LOCAL/secrets-key"
if [ ! -s "$SECRETS_KEY_FILE" ]; then
  (umask 077 && head -c 32 /dev/urandom | base64 >"$SECRETS_KEY_FILE")
fi
SECRETS_ENV=(
  "UPTIME_SECRETS__CURRENT_KEY_ID=${UPTIME_SECRETS__CURRENT_KEY_ID:-local}"
  "UPTIME_SECRETS__KEYS__LOCAL=$(cat "$SECRETS_KEY_FILE")"
)

nc_ok() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

# Stream bounds for a laptop: JetStream reserves the sum of every stream's
# max_bytes on its disk (7.5 GiB with the production defaults, sized for
# 10,000 monitors through a 6-hour outage) and refuses to create the streams
# when the disk has less free; 1.25 GiB in all is hours of backlog for a
# local stack. `UPTIME_NATS__STREAMS__*` set before `just up` win.
MIB=$((1024 * 1024))
export UPTIME_NATS__STREAMS__CHECKS_MAX_BYTES="${UPTIME_NATS__STREAMS__CHECKS_MAX_BYTES:-$((512 * MIB))}"
export UPTIME_NATS__STREAMS__RESULTS_MAX_BYTES="${UPTIME_NATS__STREAMS__RESULTS_MAX_BYTES:-$((512 * MIB))}"
export UPTIME_NATS__STREAMS__MONITORS_MAX_BYTES="${UPTIME_NATS__STREAMS__MONITORS_MAX_BYTES:-$((64 * MIB))}"
export UPTIME_NATS__STREAMS__EVENTS_MAX_BYTES="${UPTIME_NATS__STREAMS__EVENTS_MAX_BYTES:-$((128 * MIB))}"
export UPTIME_NATS__STREAMS__DEAD_MAX_BYTES="${UPTIME_NATS__STREAMS__DEAD_MAX_BYTES:-$((64 * MIB))}"
