/**
 * Where the cluster suite's programs are, found without building anything (a test never runs a
 * multi-minute build; `.ci/run` and scripts/temporal-server.sh do):
 * - the Temporal server and schema tool: GPUPROV_TEMPORAL_SERVER_DIR, else
 *   `<cacheDir>/temporal-server-v1.31.0` (holding temporal-server, temporal-sql-tool, schema/);
 * - PostgreSQL's initdb / pg_ctl: GPUPROV_PG_BIN, else the newest /usr/lib/postgresql/<v>/bin,
 *   else the directory of `pg_ctl` on PATH;
 * - as root, the unprivileged account PostgreSQL runs as (it refuses root): `postgres`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { cacheDir } from '../../src/paths';

export const TEMPORAL_SERVER_VERSION = 'v1.31.0';

export interface ClusterBinaries {
  temporalServer: string;
  sqlTool: string;
  /** Mirrors the admin-tools image's /etc/temporal/schema. */
  schemaDir: string;
  pgBin: string;
  /** uid/gid to run PostgreSQL as; undefined when this process is not root. */
  pgUser?: { uid: number; gid: number; name: string };
}

export type Found = { ok: true; bins: ClusterBinaries } | { ok: false; missing: string; install: string };

function serverDir(env: NodeJS.ProcessEnv): string {
  return env.GPUPROV_TEMPORAL_SERVER_DIR || path.join(cacheDir(env), `temporal-server-${TEMPORAL_SERVER_VERSION}`);
}

function pgBinDir(env: NodeJS.ProcessEnv): string | undefined {
  if (env.GPUPROV_PG_BIN) return env.GPUPROV_PG_BIN;
  const base = '/usr/lib/postgresql';
  if (existsSync(base)) {
    const versions = readdirSync(base)
      .filter((v) => existsSync(path.join(base, v, 'bin', 'pg_ctl')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0] !== undefined) return path.join(base, versions[0], 'bin');
  }
  try {
    return path.dirname(execFileSync('sh', ['-c', 'command -v pg_ctl'], { encoding: 'utf8' }).trim());
  } catch {
    return undefined;
  }
}

function account(name: string): { uid: number; gid: number; name: string } | undefined {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}:`));
  const [, , uid, gid] = line?.split(':') ?? [];
  return uid !== undefined && gid !== undefined ? { uid: Number(uid), gid: Number(gid), name } : undefined;
}

/** Everything the cluster needs, or the first thing missing and how to get it. */
export function findClusterBinaries(env: NodeJS.ProcessEnv = process.env): Found {
  const dir = serverDir(env);
  const temporalServer = path.join(dir, 'temporal-server');
  const sqlTool = path.join(dir, 'temporal-sql-tool');
  const schemaDir = path.join(dir, 'schema');
  if (![temporalServer, sqlTool, path.join(schemaDir, 'postgresql', 'v12')].every((p) => existsSync(p))) {
    return {
      ok: false,
      missing: `temporal-server ${TEMPORAL_SERVER_VERSION} in ${dir}`,
      install: 'bash scripts/temporal-server.sh (builds it once with go install)',
    };
  }
  const pgBin = pgBinDir(env);
  if (!pgBin || !existsSync(path.join(pgBin, 'initdb'))) return { ok: false, missing: 'PostgreSQL (initdb, pg_ctl)', install: 'apt-get install -y postgresql' };
  let pgUser: ClusterBinaries['pgUser'];
  if (process.getuid?.() === 0) {
    pgUser = account('postgres');
    if (!pgUser)
      return { ok: false, missing: 'a `postgres` account to run PostgreSQL as (it refuses root)', install: 'apt-get install -y postgresql (creates it)' };
  }
  return { ok: true, bins: { temporalServer, sqlTool, schemaDir, pgBin, ...(pgUser ? { pgUser } : {}) } };
}
