/**
 * docker-compose.temporal.yml, validated by the Compose specification's own loader (compose-go,
 * test/compose-check) rather than by reading YAML: the loader rejects what `docker compose`
 * would reject and hands back the normalised model (interpolated, merged, paths resolved),
 * which is what these assertions read. No Docker engine is needed.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { SEARCH_ATTRIBUTES } from '../../src/core/api';
import { requireTool } from '../harness/temporal';

/** The parts of compose-go's normalised project these tests read. */
interface Service {
  image: string;
  ports?: { target: number; published: string; protocol: string }[];
  environment?: Record<string, string | null>;
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
  entrypoint?: string[] | null;
  configs?: { source: string; target: string }[];
}
interface Project {
  name: string;
  services: Record<string, Service>;
  configs?: Record<string, { file?: string; content?: string }>;
  volumes?: Record<string, unknown>;
}

const ROOT = path.join(__dirname, '..', '..');
const FILE = path.join(ROOT, 'docker-compose.temporal.yml');
const haveGo = (() => {
  try {
    execFileSync('go', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** The checker binary: GPUPROV_COMPOSE_CHECK (set by .ci/run), else built once by scripts/compose-check.sh. */
function checker(): string {
  const given = process.env.GPUPROV_COMPOSE_CHECK;
  if (given) return given;
  return execFileSync('bash', [path.join(ROOT, 'scripts', 'compose-check.sh')], { encoding: 'utf8', timeout: 170_000 }).trim();
}

const available =
  Boolean(process.env.GPUPROV_COMPOSE_CHECK) || requireTool('go (to build test/compose-check)', haveGo, 'https://go.dev/dl or apt-get install golang-go');

describe.skipIf(!available)('docker-compose.temporal.yml (compose-go loader)', () => {
  let bin: string;
  let project: Project;
  let services: Record<string, Service>;
  const byImage = (repo: string): Array<[string, Service]> => Object.entries(services).filter(([, s]) => s.image.split(':')[0] === repo);
  const one = (repo: string): [string, Service] => {
    const found = byImage(repo);
    expect(found, `one service with image ${repo}`).toHaveLength(1);
    return found[0]!;
  };
  /** The repository file a service's config at `target` comes from. */
  const configFile = (s: Service, target: string): string | undefined => {
    const ref = s.configs?.find((c) => c.target === target);
    return ref ? project.configs?.[ref.source]?.file : undefined;
  };
  /** The step whose entrypoint runs the given repository script, with that script's text. */
  const stepRunning = (script: string): { name: string; service: Service } => {
    const want = path.join(ROOT, 'scripts', 'temporal', script);
    for (const [name, s] of byImage('temporalio/admin-tools')) {
      const ran = (s.entrypoint ?? []).find((arg) => configFile(s, arg) !== undefined);
      if (ran !== undefined && configFile(s, ran) === want) return { name, service: s };
    }
    throw new Error(`no admin-tools step runs scripts/temporal/${script}`);
  };

  beforeAll(() => {
    bin = checker();
    project = JSON.parse(execFileSync(bin, [FILE], { encoding: 'utf8' })) as Project;
    services = project.services;
  }, 180_000);

  it('is rejected by the loader when broken (the check is real)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gpuprov-compose-'));
    const bad = path.join(dir, 'bad.yml');
    fs.writeFileSync(bad, 'services:\n  a:\n    image: x:1\n    depends_on:\n      nowhere: { condition: service_healthy }\n');
    let err = '';
    try {
      execFileSync(bin, [bad], { encoding: 'utf8', stdio: 'pipe' });
    } catch (e) {
      err = String((e as { stderr?: string }).stderr);
    }
    fs.rmSync(dir, { recursive: true, force: true });
    expect(err).toMatch(/nowhere/);
  });

  it('has PostgreSQL 16, the Temporal server, admin-tools steps and the UI, every image pinned', () => {
    expect(project.name).toBe('gpuprov-temporal');
    expect(one('postgres')[1].image).toMatch(/^postgres:16(\.\d+)?$/);
    one('temporalio/ui');
    const server = one('temporalio/server')[1].image.split(':')[1];
    expect(byImage('temporalio/admin-tools').length).toBeGreaterThanOrEqual(2);
    for (const [, s] of byImage('temporalio/admin-tools')) expect(s.image.split(':')[1]).toBe(server);
    for (const [name, s] of Object.entries(services)) expect(s.image.split(':')[1], `${name} image ${s.image}`).toMatch(/^\d+(\.\d+)+$/);
  });

  it('publishes gRPC on 7233 and the Web UI on 8080', () => {
    expect(one('temporalio/server')[1].ports).toContainEqual(expect.objectContaining({ target: 7233, published: '7233', protocol: 'tcp' }));
    const [, ui] = one('temporalio/ui');
    expect(ui.ports).toContainEqual(expect.objectContaining({ target: 8080, published: '8080' }));
    expect(ui.environment?.TEMPORAL_ADDRESS).toMatch(/:7233$/);
    expect(ui.environment?.TEMPORAL_CORS_ORIGINS).toBeTruthy();
  });

  it('creates the schema with scripts/temporal/setup-schema.sh before the server starts', () => {
    const [pg, pgService] = one('postgres');
    const [serverName, server] = one('temporalio/server');
    const schema = stepRunning('setup-schema.sh');
    expect(pgService.healthcheck?.test.join(' ')).toContain('pg_isready');
    expect(schema.service.depends_on?.[pg]?.condition).toBe('service_healthy');
    expect(server.depends_on?.[schema.name]?.condition).toBe('service_completed_successfully');
    // The script reads the server's own database variables: both get the same values.
    for (const key of ['DB', 'DB_PORT', 'POSTGRES_SEEDS', 'POSTGRES_USER', 'POSTGRES_PWD']) {
      expect(schema.service.environment?.[key], key).toBe(server.environment?.[key]);
    }
    expect(server.healthcheck?.test.join(' ')).toContain('7233');
    expect(one('temporalio/ui')[1].depends_on?.[serverName]?.condition).toBe('service_healthy');
  });

  it('registers the namespace and exactly SEARCH_ATTRIBUTES with scripts/temporal/setup-namespace.sh, waiting for the namespace first', () => {
    const [serverName] = one('temporalio/server');
    const setup = stepRunning('setup-namespace.sh');
    expect(setup.service.depends_on?.[serverName]?.condition).toBe('service_healthy');
    expect(setup.service.environment?.TEMPORAL_ADDRESS).toBe(`${serverName}:7233`);
    const text = fs.readFileSync(path.join(ROOT, 'scripts', 'temporal', 'setup-namespace.sh'), 'utf8');
    const listed = /^ATTRIBUTES="([^"]*)"$/m.exec(text)?.[1]?.split(/\s+/);
    expect(listed).toEqual([...SEARCH_ATTRIBUTES]);
    expect(text).toMatch(/search-attribute create [^\n]*--type Keyword/);
    const order = ['until_ok "namespace $NAMESPACE"', 'namespace_served\n', 'add_attribute "$a"', 'attributes_served\n'].map((s) => text.lastIndexOf(s));
    expect(order.every((i) => i > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it('sets the history shard count deliberately and loads only production-safe dynamic config', () => {
    const [, server] = one('temporalio/server');
    expect(Number(server.environment?.NUM_HISTORY_SHARDS)).toBeGreaterThanOrEqual(512);
    const rel = server.environment?.DYNAMIC_CONFIG_FILE_PATH ?? '';
    const target = path.posix.isAbsolute(rel) ? rel : path.posix.join('/etc/temporal', rel);
    const file = configFile(server, target);
    expect(file).toBe(path.join(ROOT, 'docker', 'temporal', 'dynamicconfig.yaml'));
    const keys = Object.keys((parse(fs.readFileSync(file!, 'utf8')) as Record<string, unknown> | null) ?? {});
    expect(keys).not.toContain('system.forceSearchAttributesCacheRefreshOnRead');
  });

  it('says it needs Compose v2 and how to add TLS and an authorizer', () => {
    const text = fs.readFileSync(FILE, 'utf8');
    expect(text).toMatch(/Compose v2/);
    expect(text).toMatch(/TEMPORAL_TLS_FRONTEND_CERT/);
    expect(text).toMatch(/TEMPORAL_AUTH_AUTHORIZER/);
  });
});
