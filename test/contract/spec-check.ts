/**
 * The spec-judged contract check: the exchanges of our adapter's lives at a cloud's fixture (every
 * request it sent, every answer the fixture gave) go to spec_judge.py, which validates them against
 * the vendor's published definition; each finding is a mismatch unless spec-accepted.ts lists it,
 * and a listed row that no longer occurs fails too (fixed: remove it).
 */
import { existsSync } from 'node:fs';
import type { RecordedRequest } from '../fixtures/http-fixture';
import { locationOf } from '../../src/core/offers';
import type { CloudProvider, InstanceSpec, ResourceRequest } from '../../src/core/provider';
import { SPEC } from './check';
import { SPEC_ACCEPTED, specKey, type SpecFinding } from './spec-accepted';
import type { SpecContract, SpecSource } from './specs';
import { runJson } from './vendor';

/** One exchange as the judge reads it (no auth headers: only the ones that name the operation or body). */
export interface Exchange {
  method: string;
  path: string;
  query: [string, string][];
  headers: Record<string, string>;
  body: unknown;
  response?: RecordedRequest['response'];
}

/** What one cloud's summary line says. */
export interface SpecReport {
  cloud: string;
  spec: string;
  validator: string;
  requests: number;
  answers: number;
  mismatches: string[];
  accepted: number;
  stale: string[];
}

export const toExchange = (r: RecordedRequest): Exchange => {
  const h: Record<string, string> = {};
  for (const k of ['content-type', 'x-amz-target']) {
    const v = r.headers[k];
    if (typeof v === 'string') h[k] = v;
  }
  return { method: r.method, path: r.path, query: r.query, headers: h, body: r.body, ...(r.response ? { response: r.response } : {}) };
};

/** The judge's input `source`, or why it cannot be judged here (a GitHub-only definition not given locally). */
export function sourceInput(s: SpecSource): { input: Record<string, unknown> } | { unavailable: string } {
  if (s.kind !== 'openapi') return { input: { ...s } };
  const path = process.env[s.env];
  if (!path) return { unavailable: `not judged: ${s.published}; no package registry ships it (${s.env}=<a local copy> judges it)` };
  if (!existsSync(path)) throw new Error(`${s.env}=${path}: no such file`);
  return { input: { path, label: s.published.replace(/^published only on GitHub, /, '') } };
}

export interface JudgeResult {
  spec: string;
  validator: string;
  requests: number;
  answers: number;
  findings: SpecFinding[];
  /** Set when the definition's package is not installed (a skip, or a failure under GPUPROV_REQUIRE_ALL=1). */
  missing?: string;
}

/** Run spec_judge.py on `exchanges` of `cloud`. */
export async function judgeExchanges(cloud: string, kind: string, source: Record<string, unknown>, exchanges: Exchange[]): Promise<JudgeResult> {
  const r = (await runJson('spec_judge.py', { kind, source, exchanges })) as
    (Omit<JudgeResult, 'findings'> & { findings: Omit<SpecFinding, 'cloud'>[] }) | { missing: string };
  if ('missing' in r) {
    if (process.env.GPUPROV_REQUIRE_ALL === '1') throw new Error(`GPUPROV_REQUIRE_ALL=1: ${cloud}'s API definition is missing: ${r.missing}`);
    return { spec: `missing (${r.missing})`, validator: '-', requests: 0, answers: 0, findings: [], missing: r.missing };
  }
  return { ...r, findings: r.findings.map((f) => ({ cloud, ...f })) };
}

/** Split findings into mismatches and accepted ones; list accepted rows of the cloud that no longer occur. */
export function sortFindings(cloud: string, findings: SpecFinding[], accepted = SPEC_ACCEPTED): Pick<SpecReport, 'mismatches' | 'accepted' | 'stale'> {
  const rows = new Set(accepted.filter((a) => a.cloud === cloud).map(specKey));
  const seen = new Set(findings.map(specKey));
  return {
    mismatches: [...new Set(findings.map(specKey).filter((k) => !rows.has(k)))],
    accepted: [...seen].filter((k) => rows.has(k)).length,
    stale: [...rows].filter((k) => !seen.has(k)),
  };
}

/**
 * check.ts's life with prepare run twice (a retried prepare finds what the first one made: the
 * listings then carry our side resources, which a single life never lists back).
 */
async function life(provider: CloudProvider, request: ResourceRequest, spec: InstanceSpec): Promise<void> {
  const offer = (await provider.plan(request))[0];
  if (!offer) throw new Error(`${provider.name}: the fixture planned no offer for the contract request`);
  const at = locationOf(offer);
  await provider.prepare(offer, spec);
  const prepared = await provider.prepare(offer, spec);
  const id = await provider.create(offer, prepared, spec);
  for (let i = 0; i < 10; i++) if ((await provider.observe(at, spec.vmName)).some((o) => o.status === 'Running' && o.endpoint)) break;
  await provider.delete(at, spec.vmName, [id]);
  for (let i = 0; i < 10; i++) if ((await provider.observe(at, spec.vmName)).length === 0) break;
  await provider.cleanup(at, spec.vmName);
}

/** Our adapter's whole life at a fresh fixture (a second with `--image`/`--disk-gb`, a third with `--spot`), recorded. */
export async function recordLives(c: SpecContract): Promise<Exchange[]> {
  const out: Exchange[] = [];
  const lives = [
    { request: c.request, spec: SPEC },
    ...(c.imageDisk ? [{ request: { ...c.request, ...c.imageDisk }, spec: { ...SPEC, ...c.imageDisk } }] : []),
    ...(c.spot ? [{ request: { ...c.request, spot: c.spot }, spec: SPEC }] : []),
  ];
  for (const { request, spec } of lives) {
    const env = await c.start();
    try {
      await life(env.provider, request, spec);
      out.push(...env.http.requests.map(toExchange));
    } finally {
      await env.close();
    }
  }
  return out;
}

/** One cloud: record, judge, sort; `undefined` with the reason when its definition is not available here. */
export async function checkSpecCloud(c: SpecContract): Promise<SpecReport | { cloud: string; unavailable: string }> {
  const src = sourceInput(c.source);
  if ('unavailable' in src) return { cloud: c.cloud, unavailable: src.unavailable };
  const exchanges = await recordLives(c);
  const r = await judgeExchanges(c.cloud, c.source.kind, src.input, exchanges);
  if (r.missing) return { cloud: c.cloud, unavailable: `not judged: ${r.missing}` };
  return { cloud: c.cloud, spec: r.spec, validator: r.validator, requests: r.requests, answers: r.answers, ...sortFindings(c.cloud, r.findings) };
}

/** The summary line of one cloud. */
export function summaryLine(r: SpecReport | { cloud: string; unavailable: string }): string {
  if ('unavailable' in r) return `spec ${r.cloud}: ${r.unavailable}`;
  const n = (k: number, one: string, many = `${one}s`): string => `${k} ${k === 1 ? one : many}`;
  const m = n(r.mismatches.length, 'mismatch', 'mismatches');
  return `spec ${r.cloud}: ${r.spec}; ${n(r.requests, 'request')} and ${n(r.answers, 'answer')} checked; ${m}; ${n(r.accepted, 'accepted difference')} (${r.validator})`;
}
