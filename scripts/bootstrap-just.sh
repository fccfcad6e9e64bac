#!/usr/bin/env bash
# Puts `just` on PATH (~/.cargo/bin, which every rustup install has) if it is
# missing. `./dev` (the README's two commands, and so CI) runs it first.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
if command -v just >/dev/null 2>&1; then exit 0; fi
pip_tool just rust-just
mkdir -p "$HOME/.cargo/bin"
# A copy, not a link: the checkout may move or be deleted.
rm -f "$HOME/.cargo/bin/just"
cp -L "$PY_TOOLS/bin/just" "$HOME/.cargo/bin/just"
log "installed just into ~/.cargo/bin"
