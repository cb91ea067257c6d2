#!/usr/bin/env bash
# Builds test/compose-check (the Compose specification's own loader, compose-go) once per source
# change and prints the binary's path. Cached under ${GPUPROV_CACHE_DIR:-~/.cache/gpuprov}/compose-check/.
# Used by .ci/run and test/unit/compose.test.ts.
set -euo pipefail

SRC="$(cd "$(dirname "$0")/../test/compose-check" && pwd)"
CACHE="${GPUPROV_CACHE_DIR:-$HOME/.cache/gpuprov}"
key="$(cat "$SRC/go.mod" "$SRC/go.sum" "$SRC"/*.go | sha256sum | cut -c1-16)"
BIN="$CACHE/compose-check/$key/compose-check"
if ! [ -x "$BIN" ]; then
  if ! command -v go >/dev/null 2>&1; then
    echo "compose-check.sh: Go is needed to build test/compose-check once (https://go.dev/dl, or apt-get install golang-go)" >&2
    exit 1
  fi
  mkdir -p "$(dirname "$BIN")"
  (cd "$SRC" && go build -trimpath -o "$BIN.tmp" .)
  mv "$BIN.tmp" "$BIN"
fi
echo "$BIN"
