#!/usr/bin/env bash
# Tests the deployment artefacts (the Helm chart under deploy/helm/uptime):
#
#   1. installs helm, kubectl, kubernetes-validate, PyYAML and hadolint into
#      .local/tools (scripts/install-deploy-tools.sh)
#   2. helm lint with the default values and with deploy/helm/ci-values.yaml
#   3. helm template of both (parsed again offline by `kubectl kustomize`)
#   4. hadolint on the Dockerfile (it cannot be built here: no Docker engine)
#   5. deploy/tests/check_chart.py: Kubernetes schema validation of every
#      rendered object plus assertions on probes, resources, security, HPA,
#      PDBs, the migration hook, secrets, optional objects, values schema
#   6. deploy/tests/check_operations.py: the day-two objects (alert rules
#      checked and unit-tested by promtool with their runbook links, the
#      Grafana dashboard's queries, NetworkPolicies, KEDA, `helm test`,
#      image digest, volumes, NATS credentials, the checker's grace)
#   7. the local stack's environment (scripts/stack-env.sh, up.sh): its
#      acknowledge-link key made once and given to the services that use
#      it, one status-pages address for every service
#
# Every check is counted; the last line is "deploy: N passed, M failed" and
# the exit status is non-zero when anything failed. Needs no cluster.
set -uo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CHART="$REPO_ROOT/deploy/helm/uptime"
CI_VALUES="$REPO_ROOT/deploy/helm/ci-values.yaml"
TOOLS="${UPTIME_LOCAL_DIR:-$REPO_ROOT/.local}/tools"  # same override as scripts/common.sh
HELM="$TOOLS/bin/helm"
KUBECTL="$TOOLS/bin/kubectl"
export PYTHONPATH="$TOOLS/py${PYTHONPATH:+:$PYTHONPATH}"
# Keep helm's cache/config out of $HOME and away from any real kubeconfig.
export HELM_CACHE_HOME="$TOOLS/helm/cache" HELM_CONFIG_HOME="$TOOLS/helm/config" \
  HELM_DATA_HOME="$TOOLS/helm/data" KUBECONFIG=/dev/null

PASSED=0
FAILED=0
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

finish() {
  echo "deploy: $PASSED passed, $FAILED failed"
  [[ $FAILED -eq 0 ]]
  exit $?
}

# run NAME CMD...: runs CMD, counts it, shows its output only on failure.
run() {
  local name="$1"
  shift
  if "$@" >"$WORK/out" 2>&1; then
    PASSED=$((PASSED + 1))
    echo "PASS $name"
  else
    FAILED=$((FAILED + 1))
    echo "FAIL $name"
    sed 's/^/    /' "$WORK/out"
  fi
}

# 1. Tools.
run "install deploy tools" "$REPO_ROOT/scripts/install-deploy-tools.sh"
if [[ ! -x "$HELM" || ! -x "$KUBECTL" ]]; then
  finish
fi

# 2. Lint (--strict turns lint warnings into failures).
run "helm lint (default values)" "$HELM" lint --strict "$CHART"
run "helm lint (ci-values.yaml)" "$HELM" lint --strict "$CHART" -f "$CI_VALUES"

# 3. Render. `kubectl kustomize` then parses every object offline (kubectl's
#    own dry runs would need an API server) as a second opinion on the YAML.
render_and_parse() { # NAME [helm args...]
  local name="$1"
  shift
  mkdir -p "$WORK/$name"
  "$HELM" template uptime "$CHART" --namespace uptime "$@" >"$WORK/$name/all.yaml" &&
    printf 'resources:\n  - all.yaml\n' >"$WORK/$name/kustomization.yaml" &&
    "$KUBECTL" kustomize "$WORK/$name" >/dev/null
}
run "helm template + kubectl kustomize (default values)" render_and_parse default
run "helm template + kubectl kustomize (ci-values.yaml)" render_and_parse ci -f "$CI_VALUES"
# The optional operator: its CRDs, RBAC and Deployment (deploy/tests checks them).
OPERATOR_VALUES=(--set operator.enabled=true --set operator.apiKey.existingSecret=uptime-operator)
run "helm lint (operator enabled)" "$HELM" lint --strict "$CHART" "${OPERATOR_VALUES[@]}"
run "helm template + kubectl kustomize (operator enabled)" render_and_parse operator -f "$CI_VALUES" "${OPERATOR_VALUES[@]}"

# 4. The Dockerfile (no Docker engine here to build it): hadolint, and the
#    image must ship exactly the binaries the chart runs.
run "hadolint Dockerfile" "$TOOLS/py/bin/hadolint" --no-color "$REPO_ROOT/Dockerfile"
dockerfile_ships_all_binaries() {
  local bin
  for bin in api-gateway scheduler checker recorder notifier uptime-operator; do
    grep -Eq -- "-p $bin([ ;]|$)" "$REPO_ROOT/Dockerfile" || { echo "not built: $bin"; return 1; }
    grep -Eq "for bin in .*\b$bin\b" "$REPO_ROOT/Dockerfile" || { echo "not copied: $bin"; return 1; }
  done
  grep -Eq '^USER 10001' "$REPO_ROOT/Dockerfile" || { echo "no USER 10001"; return 1; }
  grep -Eq -- '--locked' "$REPO_ROOT/Dockerfile" || { echo "no --locked"; return 1; }
}
run "Dockerfile builds and ships the services and the operator as uid 10001" dockerfile_ships_all_binaries

# 5. Schema validation and assertions; each printed PASS/FAIL line counts.
python3 "$REPO_ROOT/deploy/tests/check_chart.py" \
  --helm "$HELM" --chart "$CHART" --ci-values "$CI_VALUES" >"$WORK/check.out" 2>&1
rc=$?
grep -E '^(PASS|FAIL|SKIP) |^    ' "$WORK/check.out"
p=$(grep -c '^PASS ' "$WORK/check.out")
f=$(grep -c '^FAIL ' "$WORK/check.out")
PASSED=$((PASSED + p))
FAILED=$((FAILED + f))
if [[ $rc -ne 0 && $f -eq 0 ]]; then
  # The checker crashed before it could report; show why and count it.
  FAILED=$((FAILED + 1))
  echo "FAIL deploy/tests/check_chart.py exited $rc"
  tail -n 20 "$WORK/check.out" | sed 's/^/    /'
fi

# 6. The day-two objects; same PASS/FAIL counting.
count_checks() { # FILE RC NAME
  grep -E '^(PASS|FAIL|SKIP) |^    ' "$1"
  local p f
  p=$(grep -c '^PASS ' "$1")
  f=$(grep -c '^FAIL ' "$1")
  PASSED=$((PASSED + p))
  FAILED=$((FAILED + f))
  if [[ $2 -ne 0 && $f -eq 0 ]]; then
    FAILED=$((FAILED + 1))
    echo "FAIL $3 exited $2"
    tail -n 20 "$1" | sed 's/^/    /'
  fi
}
(cd "$REPO_ROOT/deploy/tests" && python3 check_operations.py \
  --helm "$HELM" --chart "$CHART" --promtool "$TOOLS/bin/promtool" \
  --runbook "$REPO_ROOT/docs/runbook.md") >"$WORK/ops.out" 2>&1
count_checks "$WORK/ops.out" $? deploy/tests/check_operations.py

# 7. The local stack (`./dev up`): what scripts/stack-env.sh gives the
#    services, sourced twice in a scratch .local as up.sh sources it.
stack_env() { # prints VAR=value lines of a fresh shell that sourced stack-env.sh
  env -i PATH="$PATH" HOME="$HOME" UPTIME_LOCAL_DIR="$WORK/local" bash -c '
    source "$1/scripts/common.sh" && source "$1/scripts/stack-env.sh" &&
    printf "%s\n" "${SECRETS_ENV[@]}" | sed "s/^/SECRETS_ENV:/" &&
    printf "%s\n" "${SEALING_ENV[@]}" | sed "s/^/SEALING_ENV:/" &&
    echo "STATUS_PAGES_URL=$STATUS_PAGES_URL" && env' _ "$REPO_ROOT"
}
local_ack_links_key() {
  stack_env >"$WORK/env1" && stack_env >"$WORK/env2" || return 1
  local key
  key="$(cat "$WORK/local/ack-links-key")" || return 1
  [[ "$(printf %s "$key" | base64 -d | wc -c)" -eq 32 ]] || { echo "not 32 bytes: $key"; return 1; }
  [[ "$(stat -c %a "$WORK/local/ack-links-key")" == 600 ]] || { echo "readable by others"; return 1; }
  grep -qx "SECRETS_ENV:UPTIME_ACK_LINKS__SECRET=$key" "$WORK/env1" || { echo "not in SECRETS_ENV"; return 1; }
  cmp -s "$WORK/env1" "$WORK/env2" || { echo "a second start changed it"; diff "$WORK/env1" "$WORK/env2"; return 1; }
  ! grep -q '^SEALING_ENV:UPTIME_ACK_LINKS' "$WORK/env1" || { echo "in SEALING_ENV (the checkers')"; return 1; }
  grep -qx "UPTIME_ACK_LINKS__PUBLIC_BASE_URL=http://127.0.0.1:8080" "$WORK/env1" || { echo "links do not lead to the API"; return 1; }
  # The api-gateway (checks links) and the notifier (signs them) get
  # SECRETS_ENV; the checkers only the sealing key.
  local up="$REPO_ROOT/scripts/up.sh"
  grep -Eq 'start_service api-gateway env "\$\{SECRETS_ENV\[@\]\}"' "$up" || { echo "api-gateway lacks it"; return 1; }
  grep -Eq 'start_service "\$svc" env "\$\{SECRETS_ENV\[@\]\}"' "$up" || { echo "notifier lacks it"; return 1; }
  ! grep -Eq 'checker serve' <(grep SECRETS_ENV "$up") || { echo "checkers get it"; return 1; }
}
run "local stack: the acknowledge-link key is made once and reaches the api-gateway and the notifier" local_ack_links_key
local_one_status_pages_address() {
  stack_env >"$WORK/env3" || return 1
  local url
  url="$(sed -n 's/^STATUS_PAGES_URL=//p' "$WORK/env3")"
  # Exported to every service: the api-gateway's notice mails and the
  # status-pages service's confirmation mails link to the same address.
  grep -qx "UPTIME_STATUS_PAGES__PUBLIC_BASE_URL=$url" "$WORK/env3" || { echo "not exported: $url"; return 1; }
  ! grep -n 'UPTIME_STATUS_PAGES__PUBLIC_BASE_URL=' "$REPO_ROOT/scripts/up.sh" || { echo "set for one service only"; return 1; }
}
run "local stack: one status-pages address for every service's mails" local_one_status_pages_address

finish
