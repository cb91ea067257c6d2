#!/usr/bin/env bash
# Obtains kube-apiserver v1.37.2 (the real Kubernetes API server that test/k3s/real-api.test.ts
# drives) and prints its path. Built once from the Go module proxy through the wrapper module in
# test/kube-apiserver (several minutes of CPU) into
# ${GPUPROV_CACHE_DIR:-~/.cache/gpuprov}/kube-apiserver-v1.37.2 and reused afterwards.
# The build honours GOMAXPROCS and the caller's nice level; used by .ci/run.
set -euo pipefail

VERSION=v1.37.2
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${GPUPROV_CACHE_DIR:-$HOME/.cache/gpuprov}"
DIR="$CACHE/kube-apiserver-$VERSION"
BIN="$DIR/kube-apiserver"

if [ -x "$BIN" ]; then
  echo "$BIN"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "kube-apiserver.sh: Go is needed to build kube-apiserver once (https://go.dev/dl, or apt-get install golang-go)" >&2
  exit 1
fi
grep -q "k8s.io/kubernetes $VERSION" "$ROOT/test/kube-apiserver/go.mod" || {
  echo "kube-apiserver.sh: test/kube-apiserver/go.mod does not require k8s.io/kubernetes $VERSION" >&2
  exit 1
}
mkdir -p "$DIR"
minor="${VERSION#v1.}"
minor="${minor%%.*}"
# The version the server reports (/version) and checks its emulation version against.
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$VERSION -X k8s.io/component-base/version.gitMajor=1"
ldflags="$ldflags -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
cd "$ROOT/test/kube-apiserver"
go build -mod=readonly -trimpath -ldflags "$ldflags" -o "$BIN.tmp" k8s.io/kubernetes/cmd/kube-apiserver
mv "$BIN.tmp" "$BIN"
echo "$BIN"
