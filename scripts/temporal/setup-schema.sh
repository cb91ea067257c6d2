#!/bin/sh
# Creates, or upgrades, Temporal's persistence and visibility schemas on PostgreSQL. Idempotent.
# One copy, run by docker-compose.temporal.yml's temporal-schema step (admin-tools image, busybox sh)
# and by the cluster test harness (test/cluster/harness.ts).
#
# Reads the server's own variables (the same as docker-compose.temporal.yml sets):
#   DB (postgres12), POSTGRES_SEEDS, DB_PORT (5432), POSTGRES_USER, POSTGRES_PWD,
#   DBNAME (temporal), VISIBILITY_DBNAME (temporal_visibility)
# and where the tool and the schema files are:
#   TEMPORAL_SQL_TOOL (temporal-sql-tool), TEMPORAL_SCHEMA_DIR (/etc/temporal/schema, as in admin-tools)
set -eu

: "${DB:=postgres12}"
: "${POSTGRES_SEEDS:?POSTGRES_SEEDS: the PostgreSQL host}"
: "${DB_PORT:=5432}"
: "${POSTGRES_USER:?POSTGRES_USER: the PostgreSQL user}"
: "${POSTGRES_PWD:=}"
: "${DBNAME:=temporal}"
: "${VISIBILITY_DBNAME:=temporal_visibility}"
: "${TEMPORAL_SQL_TOOL:=temporal-sql-tool}"
: "${TEMPORAL_SCHEMA_DIR:=/etc/temporal/schema}"

# The password goes through the environment, not the command line (visible in ps).
SQL_PASSWORD="$POSTGRES_PWD"
export SQL_PASSWORD

tool() {
  db=$1
  shift
  "$TEMPORAL_SQL_TOOL" --plugin "$DB" --ep "$POSTGRES_SEEDS" -p "$DB_PORT" -u "$POSTGRES_USER" --db "$db" "$@"
}

schema() {
  db=$1
  dir=$2
  # create and the version-0 setup fail when a previous run already did them; update-schema
  # below then fails loudly if the database is really unreachable or broken.
  tool "$db" create-database >/dev/null 2>&1 || true
  tool "$db" setup-schema -v 0.0 >/dev/null 2>&1 || true
  tool "$db" update-schema -d "$TEMPORAL_SCHEMA_DIR/postgresql/v12/$dir/versioned"
}

schema "$DBNAME" temporal
schema "$VISIBILITY_DBNAME" visibility
echo "setup-schema: $DBNAME and $VISIBILITY_DBNAME are at the newest schema version"
