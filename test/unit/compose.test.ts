/**
 * docker-compose.temporal.yml, checked statically (no Docker engine on the build machines):
 * services, pinned images, ports, health checks, start order, and the search-attribute step.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { SEARCH_ATTRIBUTES } from '../../src/core/api';

interface Service {
  image: string;
  ports?: string[];
  environment?: Record<string, string>;
  healthcheck?: { test: string[] | string };
  depends_on?: Record<string, { condition: string }>;
  command?: string[] | string;
  entrypoint?: string[];
}

const file = path.join(__dirname, '..', '..', 'docker-compose.temporal.yml');
const compose = parse(fs.readFileSync(file, 'utf8'), { merge: true }) as { services: Record<string, Service>; volumes?: object };
const services = compose.services;

const byImage = (repo: string): Array<[string, Service]> => Object.entries(services).filter(([, s]) => s.image.split(':')[0] === repo);
const one = (repo: string): Service => {
  const found = byImage(repo);
  expect(found, `one service with image ${repo}`).toHaveLength(1);
  return found[0]![1];
};
const script = (s: Service): string => (Array.isArray(s.command) ? s.command.join('\n') : (s.command ?? ''));

describe('docker-compose.temporal.yml', () => {
  it('has PostgreSQL 16, the Temporal server, admin-tools steps and the UI', () => {
    expect(one('postgres').image).toMatch(/^postgres:16(\.\d+)?$/);
    one('temporalio/server');
    one('temporalio/ui');
    expect(byImage('temporalio/admin-tools').length).toBeGreaterThanOrEqual(1);
  });

  it('pins every image to an exact tag (no latest, no untagged image)', () => {
    for (const [name, s] of Object.entries(services)) {
      const tag = s.image.split(':')[1];
      expect(tag, `${name} image ${s.image}`).toMatch(/^\d+(\.\d+)+/);
    }
    const server = one('temporalio/server').image.split(':')[1];
    for (const [, s] of byImage('temporalio/admin-tools')) expect(s.image.split(':')[1]).toBe(server);
  });

  it('publishes gRPC on 7233 and the Web UI on 8080', () => {
    expect(one('temporalio/server').ports).toContain('7233:7233');
    const ui = one('temporalio/ui');
    expect(ui.ports).toContain('8080:8080');
    expect(ui.environment?.TEMPORAL_ADDRESS).toMatch(/:7233$/);
    expect(ui.environment?.TEMPORAL_CORS_ORIGINS).toBeTruthy();
  });

  it('health-checks the database and the server, and starts things in order', () => {
    const pg = byImage('postgres')[0]![0];
    const serverName = byImage('temporalio/server')[0]![0];
    expect(JSON.stringify(services[pg]!.healthcheck?.test)).toContain('pg_isready');
    expect(JSON.stringify(services[serverName]!.healthcheck?.test)).toContain('7233');
    const conditionOn = (s: Service, dep: string): string | undefined => s.depends_on?.[dep]?.condition;
    const steps = byImage('temporalio/admin-tools');
    const schema = steps.find(([, s]) => script(s).includes('temporal-sql-tool'));
    expect(schema, 'an admin-tools step creating the schema').toBeDefined();
    expect(conditionOn(schema![1], pg)).toBe('service_healthy');
    expect(conditionOn(services[serverName]!, schema![0])).toBe('service_completed_successfully');
    expect(conditionOn(one('temporalio/ui'), serverName)).toBe('service_healthy');
  });

  it('creates the namespace and all five search attributes as Keyword after the server is healthy', () => {
    const serverName = byImage('temporalio/server')[0]![0];
    const setup = byImage('temporalio/admin-tools').find(([, s]) => script(s).includes('search-attribute create'));
    expect(setup, 'an admin-tools step creating search attributes').toBeDefined();
    const [, step] = setup!;
    expect(step.depends_on?.[serverName]?.condition).toBe('service_healthy');
    const text = script(step);
    expect(text).toContain('operator namespace create');
    expect(text).toMatch(/search-attribute create [^\n]*--type Keyword/);
    for (const name of SEARCH_ATTRIBUTES) expect(text).toMatch(new RegExp(`\\b${name}\\b`));
    expect(SEARCH_ATTRIBUTES).toHaveLength(5);
  });
});
