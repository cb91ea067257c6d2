/**
 * Pure Prime Intellect → gpuprov mapping: one offer per data centre and market (spot asks only
 * when asked for), status table, a stopped spot pod as a preemption, sshConnection parsing.
 */
import { ownedName } from '../deployment';
import { type InstanceStatus, type Json, type Location, type Observed, type Offer, type Preemption, type SshEndpoint } from '../../core/provider';
import type { PrimeAvailability, PrimePod } from './api';

export const CLOUD = 'primeintellect';

/** Vendor status → normalised; `null` = terminal. */
export const STATUS: Record<string, InstanceStatus | null> = {
  PROVISIONING: 'Pending',
  PENDING: 'Pending',
  ACTIVE: 'Running',
  STOPPED: 'Stopped',
  ERROR: 'Failed',
  DELETING: 'Terminating',
  TERMINATED: null,
};

const OUT_OF_STOCK = new Set(['unavailable', 'out_of_stock', 'none']);
const FAILED_INSTALL = new Set(['ERROR', 'FAILED']);

export function regionOf(a: Pick<PrimeAvailability, 'dataCenter' | 'country'>): string {
  return a.dataCenter ?? a.country ?? 'unknown';
}

function priceOf(a: PrimeAvailability): number | undefined {
  const cur = a.prices?.currency;
  if (cur && cur.toUpperCase() !== 'USD') return undefined;
  return a.prices?.onDemand ?? a.prices?.communityPrice ?? undefined;
}

/**
 * One offer per (data centre, GPU type, GPU count, market): the cheapest box there with stock
 * (the price is per box), cheapest first; `planOffers` keeps the ones that match the request.
 * `isSpot` asks are skipped unless `withSpot`; a spot offer carries the on-demand price of its
 * place and shape beside it (the cheapest on-demand box there, absent when there is none).
 */
export function toOffers(items: PrimeAvailability[], pricedAt: string, withSpot = false): Offer[] {
  const best = new Map<string, PrimeAvailability>();
  const place = (a: PrimeAvailability): string => `${regionOf(a)}|${a.gpuType}|${a.gpuCount}`;
  for (const a of items) {
    if ((a.isSpot && !withSpot) || OUT_OF_STOCK.has((a.stockStatus ?? '').toLowerCase())) continue;
    const key = `${place(a)}|${a.isSpot ? 'spot' : ''}`;
    const cur = best.get(key);
    if (!cur || (priceOf(a) ?? Infinity) < (priceOf(cur) ?? Infinity)) best.set(key, a);
  }
  return [...best.values()]
    .map((a): Offer => {
      const p = priceOf(a);
      const beside = a.isSpot ? best.get(`${place(a)}|`) : undefined;
      const onDemand = beside && priceOf(beside);
      const extra: Json = {
        cloudId: a.cloudId,
        gpuType: a.gpuType,
        gpuCount: a.gpuCount,
        socket: a.socket ?? null,
        provider: a.provider ?? null,
        dataCenter: a.dataCenter ?? null,
        country: a.country ?? null,
        security: a.security ?? null,
        image: a.images?.[0] ?? null,
        diskSize: a.disk?.defaultCount ?? null,
        vcpus: a.vcpu?.defaultCount ?? null,
        memory: a.memory?.defaultCount ?? null,
      };
      return {
        cloud: CLOUD,
        region: regionOf(a),
        instanceType: a.gpuType,
        gpu: { model: a.gpuType, count: a.gpuCount, ...(a.gpuMemory ? { memoryGiB: a.gpuMemory } : {}) },
        ...(a.vcpu?.defaultCount ? { vcpus: a.vcpu.defaultCount } : {}),
        ...(a.memory?.defaultCount ? { memoryGiB: a.memory.defaultCount } : {}),
        ...(p === undefined ? {} : { pricePerHour: p, currency: 'USD', priceSource: 'api' as const, pricedAt }),
        ...(a.isSpot ? { market: 'spot' as const, ...(onDemand === undefined ? {} : { onDemandPricePerHour: onDemand }) } : {}),
        extra,
      };
    })
    .sort((a, b) => (a.pricePerHour ?? Infinity) - (b.pricePerHour ?? Infinity) || a.region.localeCompare(b.region));
}

/**
 * Parse `sshConnection`: `"ssh root@1.2.3.4 -p 22"`, `"root@1.2.3.4 -p 2222"`, `"root@host:2222"`,
 * `"ssh -p 2222 -l ubuntu host"`, or a list of those (possibly `[null]`). Port defaults to 22.
 */
export function parseSshConnection(v: string | (string | null)[] | null | undefined): SshEndpoint | undefined {
  const s = Array.isArray(v) ? v.find((x): x is string => typeof x === 'string' && x.trim() !== '') : v;
  if (!s) return undefined;
  const tokens = s.trim().split(/\s+/);
  if (tokens[0] === 'ssh') tokens.shift();
  let port: number | undefined;
  let user: string | undefined;
  let target: string | undefined;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t === '-p') port = Number(tokens[++i]);
    else if (/^-p\d+$/.test(t)) port = Number(t.slice(2));
    else if (t === '-l') user = tokens[++i];
    else if (/^-[ioJFE]$/.test(t)) i++;
    else if (t.startsWith('-')) continue;
    else target ??= t;
  }
  if (!target) return undefined;
  const m = /^(?:([^@]+)@)?(\[[^\]]+\]|[^:@]+)(?::(\d+))?$/.exec(target);
  if (!m) return undefined;
  const host = m[2]!.replace(/^\[|\]$/g, '');
  const p = port ?? (m[3] ? Number(m[3]) : 22);
  if (!host || !Number.isInteger(p) || p <= 0 || p > 65535) return undefined;
  const u = m[1] ?? user;
  return { host, port: p, ...(u ? { user: u } : {}) };
}

/** The pod is this VM's in this deployment (its name) and at `at`. */
export function hasIdentity(pod: PrimePod, vmName: string, deployment: string, at: Location): boolean {
  return pod.name === ownedName(vmName, deployment) && (pod.dataCenterId ?? at.region) === at.region;
}

/**
 * A spot pod the provider stopped: gpuprov never stops pods, and the API has no reclaim state or
 * notice (PodStatusEnum), so a `STOPPED` spot pod is read as reclaimed, noticed when first seen.
 */
export function preemptionOf(pod: PrimePod, seenAt: string): Preemption | undefined {
  if (pod.isSpot !== true || pod.status.toUpperCase() !== 'STOPPED') return undefined;
  return { noticeAt: seenAt, detail: `spot pod ${pod.status}${pod.installationFailure ? ` (${pod.installationFailure})` : ''}` };
}

/** `seenAt`: this look's time, the notice time of a preemption it finds. */
export function toObserved(pod: PrimePod, at: Location, seenAt: string = new Date().toISOString()): Observed | undefined {
  const raw = pod.status.toUpperCase();
  let status = raw in STATUS ? STATUS[raw] : 'Pending';
  if (status === null || status === undefined) return undefined;
  const install = (pod.installationStatus ?? '').toUpperCase();
  if (status === 'Running' && FAILED_INSTALL.has(install)) status = 'Failed';
  const endpoint = status === 'Running' ? parseSshConnection(pod.sshConnection) : undefined;
  const reason = status === 'Failed' ? (pod.installationFailure ?? `${raw}${install ? `/${install}` : ''}`) : raw in STATUS ? undefined : raw;
  const preemption = preemptionOf(pod, seenAt);
  return {
    id: pod.id,
    status,
    ...(reason ? { reason } : {}),
    ...(endpoint ? { endpoint } : {}),
    location: { cloud: CLOUD, region: pod.dataCenterId ?? at.region },
    ...(pod.gpuName ? { instanceType: pod.gpuName } : {}),
    ...(preemption ? { preemption } : {}),
  };
}
