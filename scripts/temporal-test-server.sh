#!/usr/bin/env bash
# Obtains Temporal's time-skipping test server (the Java SDK's io.temporal:temporal-test-server,
# the same server the TypeScript SDK's TestWorkflowEnvironment.createTimeSkipping downloads as a
# native build) from Maven Central, with a launcher that takes the port as its argument; prints
# the launcher's path:
#
#   <dir>/temporal-test-server   (java -cp '<dir>/lib/*' io.temporal.testserver.TestServer PORT)
#
# Fetched once into ${GPUPROV_CACHE_DIR:-~/.cache/gpuprov}/temporal-test-server-$VERSION and reused.
# The workflow tests that skip time find it there (test/harness/time-skipping.ts), or by
# GPUPROV_TEST_SERVER; without it they skip (or fail under GPUPROV_REQUIRE_ALL=1).
set -euo pipefail

VERSION=1.31.0
CACHE="${GPUPROV_CACHE_DIR:-$HOME/.cache/gpuprov}"
DIR="$CACHE/temporal-test-server-$VERSION"
LAUNCHER="$DIR/temporal-test-server"

if [ -x "$LAUNCHER" ] && [ -f "$DIR/lib/temporal-test-server-$VERSION.jar" ]; then
  echo "$LAUNCHER"
  exit 0
fi
for tool in java mvn; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "temporal-test-server.sh: $tool is needed (apt-get install default-jdk-headless maven)" >&2
    exit 1
  fi
done
mkdir -p "$DIR"
cat >"$DIR/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
  <groupId>gpuprov</groupId><artifactId>temporal-test-server-fetch</artifactId><version>1</version>
  <dependencies><dependency><groupId>io.temporal</groupId><artifactId>temporal-test-server</artifactId><version>$VERSION</version></dependency></dependencies>
</project>
POM
(cd "$DIR" && mvn -q -B dependency:copy-dependencies -DoutputDirectory="$DIR/lib" >&2)
cat >"$LAUNCHER" <<SH
#!/bin/sh
exec java -cp '$DIR/lib/*' io.temporal.testserver.TestServer "\$@"
SH
chmod +x "$LAUNCHER"
echo "$LAUNCHER"
