#!/bin/sh
# Registers the namespace and gpuprov's search attributes on a running Temporal server, and
# waits until both are usable. Idempotent; safe to run from several places at once.
# One copy, run by docker-compose.temporal.yml's temporal-setup step (admin-tools image, busybox sh)
# and by the cluster test harness (test/cluster/harness.ts).
#
#   TEMPORAL_ADDRESS      the frontend, host:port (read by the temporal CLI itself)
#   NAMESPACE             default: default
#   NAMESPACE_RETENTION   default: 720h
#   TEMPORAL_CLI          default: temporal
#   SETUP_WAIT_SECONDS    give up after this long (default 300)
#
# The attribute names are src/core/api.ts SEARCH_ATTRIBUTES (test/unit/compose.test.ts checks
# that the two lists agree).
set -eu

: "${TEMPORAL_ADDRESS:?TEMPORAL_ADDRESS: the Temporal frontend, host:port}"
: "${NAMESPACE:=default}"
: "${NAMESPACE_RETENTION:=720h}"
: "${TEMPORAL_CLI:=temporal}"
: "${SETUP_WAIT_SECONDS:=300}"
ATTRIBUTES="GpuprovVmName GpuprovStage GpuprovCloud GpuprovRegion GpuprovInstanceType"

deadline=$(($(date +%s) + SETUP_WAIT_SECONDS))

# until WHAT CMD...: runs CMD every second until it succeeds; after the deadline, shows its output and fails.
until_ok() {
  what=$1
  shift
  while ! "$@" >/dev/null 2>&1; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "setup-namespace: gave up after ${SETUP_WAIT_SECONDS}s waiting for $what; last attempt:" >&2
      "$@" >&2 || true
      exit 1
    fi
    sleep 1
  done
}

t() { "$TEMPORAL_CLI" "$@"; }

has_namespace() { t operator namespace describe -n "$NAMESPACE"; }
ensure_namespace() { has_namespace || t operator namespace create -n "$NAMESPACE" --retention "$NAMESPACE_RETENTION" || has_namespace; }

# Operator and visibility calls look the namespace up in the frontend's namespace cache, which
# learns of a new namespace only on its next refresh (system.namespaceCacheRefreshInterval):
# creating attributes before that raced and failed. A visibility list goes through that cache.
namespace_served() { t workflow list -n "$NAMESPACE" --limit 1; }

# One call per attribute (the temporal CLI adds only the first of several --name); the server
# skips an attribute that already exists, so a re-run or a concurrent run is harmless.
add_attribute() { t operator search-attribute create -n "$NAMESPACE" --name "$1" --type Keyword; }

# A query naming every attribute is accepted only once the frontend maps all of them.
attributes_served() {
  q=""
  for a in $ATTRIBUTES; do q="${q:+$q AND }$a = 'gpuprov-setup-probe'"; done
  t workflow list -n "$NAMESPACE" --limit 1 --query "$q"
}

until_ok "the server at $TEMPORAL_ADDRESS" t operator cluster health
until_ok "namespace $NAMESPACE" ensure_namespace
until_ok "namespace $NAMESPACE in the frontend's cache" namespace_served
for a in $ATTRIBUTES; do until_ok "search attribute $a" add_attribute "$a"; done
until_ok "search attributes usable in queries" attributes_served
echo "setup-namespace: namespace $NAMESPACE with search attributes $ATTRIBUTES is ready at $TEMPORAL_ADDRESS"
