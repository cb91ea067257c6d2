/** The request-shape diff the contract suite relies on (no vendor client needed). */
import { describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../fixtures/http-fixture';
import { authOf, byCall, diffShapes, shapeOf, type CallRoute } from './shapes';

const routes: CallRoute[] = [
  { call: 'create', method: 'PUT', pattern: '/api/v0/asks/:id' },
  { call: 'list', method: 'GET', pattern: '/api/v1/instances' },
];
const req = (
  method: string,
  path: string,
  body?: unknown,
  query: [string, string][] = [],
  headers: RecordedRequest['headers'] = { authorization: 'Bearer secret' },
): RecordedRequest => ({ method, path, query, headers, body });

describe('contract shapes', () => {
  it('assigns requests to calls with or without a trailing slash, and keeps the slash in the path', () => {
    const { calls, stray } = byCall(routes, [req('PUT', '/api/v0/asks/42/'), req('GET', '/api/v1/instances'), req('GET', '/elsewhere')]);
    expect([...calls.keys()]).toEqual(['create', 'list']);
    expect(stray.map((r) => r.path)).toEqual(['/elsewhere']);
    expect(shapeOf(routes[0]!, calls.get('create')!).get('path')).toBe('/api/v0/asks/:id/');
  });

  it('compares field names and JSON types, values where asked, never credentials', () => {
    const ours = shapeOf(routes[0]!, [req('PUT', '/api/v0/asks/1', { env: '-p 22:22', runtype: 'ssh_direct', disk: 50, extra: undefined })], {
      values: ['body.runtype'],
    });
    const vendor = shapeOf(
      routes[0]!,
      [req('PUT', '/api/v0/asks/1/', { env: { '-p 22:22': '1' }, runtype: 'ssh_direc ssh_proxy', disk: 50, price: null, force: false })],
      { values: ['body.runtype'], opaque: ['body.env'] },
    );
    expect(diffShapes('vastai', 'create', ours, vendor)).toEqual([
      { cloud: 'vastai', call: 'create', aspect: 'path', ours: '/api/v0/asks/:id', vendor: '/api/v0/asks/:id/' },
      { cloud: 'vastai', call: 'create', aspect: 'body.env', ours: 'string', vendor: 'object' },
      { cloud: 'vastai', call: 'create', aspect: 'value.body.runtype', ours: '"ssh_direct"', vendor: '"ssh_direc ssh_proxy"' },
      { cloud: 'vastai', call: 'create', aspect: 'body.force', ours: 'absent', vendor: 'boolean' },
    ]);
    expect(authOf({ authorization: 'Bearer secret' })).toBe('authorization Bearer');
    expect(authOf({ api_key: 'secret' })).toBe('header api_key');
  });

  it('reports a field that differs once, not each of its sub-fields', () => {
    const a = shapeOf(routes[1]!, [req('GET', '/api/v1/instances', { id: 'x' })]);
    const b = shapeOf(routes[1]!, [req('GET', '/api/v1/instances', { id: ['x'] })]);
    expect(diffShapes('c', 'list', a, b).map((d) => d.aspect)).toEqual(['body.id']);
  });
});
