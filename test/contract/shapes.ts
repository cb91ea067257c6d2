/**
 * Request shapes for the contract suite: each request a fixture recorded is assigned to one of the
 * cloud's calls (by method and path pattern), reduced to what the vendor's API cares about
 * (method, path template, query names and types, body field names and JSON types, the auth
 * scheme, and the values of a few enum-like fields), and our adapter's shape of a call is
 * diffed with the vendor client's shape of the same call.
 */
import type { RecordedRequest } from '../fixtures/http-fixture';

/** One API call of a cloud: `pattern` has `:param` segments; a trailing slash is ignored when matching. */
export interface CallRoute {
  call: string;
  method: string;
  pattern: string;
}

/** What a contract compares of one call; every map is aspect → descriptor. */
export type Shape = Map<string, string>;

/** One difference between our adapter's request and the vendor client's for the same call. */
export interface Difference {
  cloud: string;
  call: string;
  /** `method`, `path`, `auth`, `call`, `query.<name>`, `body.<field.path>`, `value.<aspect>` */
  aspect: string;
  ours: string;
  vendor: string;
}

export interface ShapeOptions {
  /** Body paths kept as one leaf (maps with data-dependent keys, e.g. Vast.ai's `env`). */
  opaque?: string[];
  /** Aspects whose values (not only types) are compared, e.g. `body.type`, `query.isSpot`. */
  values?: string[];
}

const segments = (p: string): string[] => (p.length > 1 && p.endsWith('/') ? p.slice(0, -1) : p).split('/');

function fits(pattern: string, path: string): boolean {
  const a = segments(pattern);
  const b = segments(path);
  return a.length === b.length && a.every((s, i) => s.startsWith(':') || s === b[i]);
}

/** The call a request belongs to: same method and pattern first, else the only call with that pattern. */
export function callOf(routes: CallRoute[], req: { method: string; path: string }): CallRoute | undefined {
  const byPath = routes.filter((r) => fits(r.pattern, req.path));
  return byPath.find((r) => r.method === req.method) ?? (byPath.length === 1 ? byPath[0] : undefined);
}

/** The path as sent with its parameter segments named after the pattern (the trailing slash kept). */
function template(pattern: string, path: string): string {
  const names = segments(pattern);
  const out = segments(path).map((s, i) => (names[i]?.startsWith(':') ? names[i] : s));
  return out.join('/') + (path.length > 1 && path.endsWith('/') ? '/' : '');
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

function queryType(v: string): string {
  if (/^-?\d+(\.\d+)?$/.test(v)) return 'number';
  if (v === 'true' || v === 'false') return 'boolean';
  try {
    const j: unknown = JSON.parse(v);
    if (typeof j === 'object' && j !== null) return 'json';
  } catch {
    // not JSON: a plain string
  }
  return 'string';
}

/** `authorization: <scheme>` (never the credential), or the names of key-like headers. */
export function authOf(headers: RecordedRequest['headers']): string {
  const a = headers.authorization;
  if (typeof a === 'string') return `authorization ${a.split(' ')[0] ?? ''}`.trim();
  const named = Object.keys(headers)
    .filter((k) => /api[-_]?key|token|auth/i.test(k))
    .sort();
  return named.length ? `header ${named.join(',')}` : 'none';
}

type Acc = Map<string, Set<string>>;
const add = (acc: Acc, k: string, v: string): void => {
  if (!acc.has(k)) acc.set(k, new Set());
  acc.get(k)!.add(v);
};

function flatten(v: unknown, at: string, acc: Acc, opts: ShapeOptions): void {
  if (v === undefined) return;
  add(acc, at, jsonType(v));
  if (opts.values?.includes(at)) add(acc, `value.${at}`, JSON.stringify(v));
  if (opts.opaque?.includes(at) || v === null || typeof v !== 'object') return;
  if (Array.isArray(v)) for (const el of v) flatten(el, `${at}[]`, acc, opts);
  else for (const [k, el] of Object.entries(v)) flatten(el, `${at}.${k}`, acc, opts);
}

/** The shape of every request of one call (types of repeated requests are united). */
export function shapeOf(route: CallRoute, reqs: RecordedRequest[], opts: ShapeOptions = {}): Shape {
  const acc: Acc = new Map();
  for (const r of reqs) {
    add(acc, 'method', r.method);
    add(acc, 'path', template(route.pattern, r.path));
    add(acc, 'auth', authOf(r.headers));
    for (const [k, v] of r.query) {
      add(acc, `query.${k}`, queryType(v));
      if (opts.values?.includes(`query.${k}`)) add(acc, `value.query.${k}`, JSON.stringify(v));
    }
    if (r.body !== undefined) flatten(r.body, 'body', acc, opts);
  }
  return new Map([...acc].map(([k, v]) => [k, [...v].sort().join('|')]));
}

/** Group recorded requests by call; requests that fit no call are returned apart. */
export function byCall(routes: CallRoute[], reqs: RecordedRequest[]): { calls: Map<string, RecordedRequest[]>; stray: RecordedRequest[] } {
  const calls = new Map<string, RecordedRequest[]>();
  const stray: RecordedRequest[] = [];
  for (const r of reqs) {
    const route = callOf(routes, r);
    if (!route) stray.push(r);
    else calls.set(route.call, [...(calls.get(route.call) ?? []), r]);
  }
  return { calls, stray };
}

/**
 * Differences between our shape and the vendor's for one call. A field the vendor's client sends
 * as `null` and we omit is the same request (both mean "not set").
 */
export function diffShapes(cloud: string, call: string, ours: Shape, vendor: Shape): Difference[] {
  const out: Difference[] = [];
  for (const aspect of new Set([...ours.keys(), ...vendor.keys()])) {
    const o = ours.get(aspect) ?? 'absent';
    const v = vendor.get(aspect) ?? 'absent';
    if (o === v || (o === 'absent' && v === 'null')) continue;
    if (aspect.startsWith('value.') && (o === 'absent' || v === 'absent')) continue;
    out.push({ cloud, call, aspect, ours: o, vendor: v });
  }
  // The sub-fields of a field that already differs (omitted, or of another type) are not differences of their own.
  const differs = new Set(out.map((d) => d.aspect));
  const parents = (a: string): string[] => [...a.matchAll(/\.|\[\]/g)].map((m) => a.slice(0, m.index));
  return out.filter((d) => !parents(d.aspect).some((p) => differs.has(p)));
}

export const differenceKey = (d: Difference): string => `${d.cloud} ${d.call} ${d.aspect}: ours ${d.ours}, vendor ${d.vendor}`;
