#!/usr/bin/env bash
# Obtains the production Temporal server (the image's temporal-server) and its schema tool
# (temporal-sql-tool), v1.31.0, with the SQL schema files beside them; prints their directory:
#
#   <dir>/temporal-server  <dir>/temporal-sql-tool  <dir>/schema/postgresql/v12/…
#
# Built once from the Go module proxy (`go install …@v1.31.0`, several minutes of CPU) into
# ${GPUPROV_CACHE_DIR:-~/.cache/gpuprov}/temporal-server-v1.31.0 and reused afterwards.
# Used by .ci/run; the cluster test harness looks in the same place (test/cluster/binaries.ts).
set -euo pipefail

VERSION=v1.31.0
MODULE=go.temporal.io/server
CACHE="${GPUPROV_CACHE_DIR:-$HOME/.cache/gpuprov}"
DIR="$CACHE/temporal-server-$VERSION"

ready() { [ -x "$DIR/temporal-server" ] && [ -x "$DIR/temporal-sql-tool" ] && [ -d "$DIR/schema/postgresql/v12" ]; }
if ready; then
  echo "$DIR"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "temporal-server.sh: Go is needed to build the Temporal server once (https://go.dev/dl, or apt-get install golang-go)" >&2
  exit 1
fi
mkdir -p "$DIR"
cd "$DIR" # outside any Go module: go install pkg@version ignores the working directory's go.mod
# `go install` names the binaries after their package directories (server, sql).
[ -x "$DIR/server" ] || GOBIN="$DIR" go install "$MODULE/cmd/server@$VERSION"
[ -x "$DIR/sql" ] || GOBIN="$DIR" go install "$MODULE/cmd/tools/sql@$VERSION"
ln -sfn server "$DIR/temporal-server"
ln -sfn sql "$DIR/temporal-sql-tool"
# The schema files ship in the module, as they do in the admin-tools image's /etc/temporal/schema.
src="$(go mod download -json "$MODULE@$VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')"
[ -d "$src/schema/postgresql/v12" ] || { echo "temporal-server.sh: no schema under '$src'" >&2; exit 1; }
rm -rf "$DIR/schema.tmp"
cp -R "$src/schema" "$DIR/schema.tmp"
chmod -R u+w "$DIR/schema.tmp"
rm -rf "$DIR/schema"
mv "$DIR/schema.tmp" "$DIR/schema"
ready
echo "$DIR"
