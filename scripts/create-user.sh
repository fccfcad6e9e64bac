#!/usr/bin/env bash
# `just create-user NAME`: a user on the local stack; its raw API key is the last line.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
source "$REPO/scripts/stack-env.sh"
bin="$REPO/target/release/api-gateway"
[ -x "$bin" ] || cargo build --release --quiet --manifest-path "$REPO/Cargo.toml" -p api-gateway
"$bin" create-user --name "$1"
