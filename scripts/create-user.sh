#!/usr/bin/env bash
# `just create-user NAME`: a user on the local stack; its raw API key is the last line.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
source "$REPO/scripts/stack-env.sh"
# The binary `just up` built (debug unless UPTIME_LOCAL_RELEASE=1).
if [[ "${UPTIME_LOCAL_RELEASE:-0}" == 1 ]]; then profile=release; else profile=debug; fi
bin="${CARGO_TARGET_DIR:-$REPO/target}/$profile/api-gateway"
[ -x "$bin" ] || cargo build $([[ $profile == release ]] && echo --release) --quiet \
  --manifest-path "$REPO/Cargo.toml" -p api-gateway
"$bin" create-user --name "$1"
