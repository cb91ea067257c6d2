/**
 * One HTTP cloud's contract check: our adapter runs a whole life (plan, prepare, create with a
 * boot script, observe until running, delete, observe until gone, cleanup) against a fresh
 * fixture; the vendor's client makes the same calls against another fresh fixture; then
 * (a) every call the vendor's client could not complete is a failure, and
 * (b) every difference between our requests and the vendor's, per call, is either listed in
 *     known.ts or a failure, and every entry of known.ts for the cloud must still occur.
 */
import { locationOf } from '../../src/core/offers';
import type { CloudProvider, InstanceSpec, ResourceRequest } from '../../src/core/provider';
import type { ContractEnv, HttpContract } from './clouds';
import { ACCEPTED_DIFFERENCES, KNOWN_ADAPTER_MISMATCHES, type KnownDifference } from './known';
import { byCall, diffShapes, differenceKey, shapeOf, type Difference } from './shapes';
import { bare, runDriver } from './vendor';

const MAX_POLLS = 10;

/** What the summary line and the assertions need of one cloud. */
export interface CloudReport {
  cloud: string;
  client: string;
  version: string;
  /** Differences with the vendor's client that are adapter mismatches (known or new). */
  mismatches: number;
  accepted: number;
  failures: string[];
  notes: string[];
}

/** The spec of every contract life (a run with `--image`/`--disk-gb` adds them). */
export const SPEC: InstanceSpec = {
  vmName: 'contract',
  owner: 'contract',
  publicKeys: ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIContractKeyOfTheWorkerXXXXXXXXXXXXXXXXXXXXXX contract@worker'],
  bootScript: { script: '#!/bin/sh\necho contract-boot', env: { GPUPROV_CONTRACT: '1' } },
  idempotencyKey: 'contract/1',
  openPorts: [22],
};

/** A whole life of one VM through the adapter, each wait bounded by a number of polls. */
export async function exercise(provider: CloudProvider, request: ResourceRequest, spec: InstanceSpec = SPEC): Promise<void> {
  const offer = (await provider.plan(request))[0];
  if (!offer) throw new Error(`${provider.name}: the fixture planned no offer for the contract request`);
  const at = locationOf(offer);
  const prepared = await provider.prepare(offer, spec);
  const id = await provider.create(offer, prepared, spec);
  for (let i = 0; i < MAX_POLLS; i++) {
    if ((await provider.observe(at, spec.vmName)).some((o) => o.status === 'Running' && o.endpoint)) break;
  }
  await provider.delete(at, spec.vmName, [id]);
  for (let i = 0; i < MAX_POLLS; i++) {
    if ((await provider.observe(at, spec.vmName)).length === 0) break;
  }
  await provider.cleanup(at, spec.vmName);
}

const keyOf = (k: KnownDifference): string => differenceKey(k);

/**
 * Split `found` into adapter mismatches, accepted differences and unexpected ones; list stale table
 * rows. `also`: the rows of that table name count too, as if written for `cloud` (the run with
 * `--image`/`--disk-gb` reads the cloud's rows and its own, `<cloud> image-disk`).
 */
export function judge(cloud: string, found: Difference[], also?: string): { mismatches: number; accepted: number; failures: string[] } {
  const rows = (t: KnownDifference[]): Set<string> => new Set(t.filter((k) => k.cloud === cloud || k.cloud === also).map((k) => keyOf({ ...k, cloud })));
  const known = rows(KNOWN_ADAPTER_MISMATCHES);
  const accepted = rows(ACCEPTED_DIFFERENCES);
  const seen = new Set(found.map(differenceKey));
  const failures = [
    ...found.filter((d) => !known.has(differenceKey(d)) && !accepted.has(differenceKey(d))).map((d) => `new difference: ${differenceKey(d)}`),
    ...[...known, ...accepted].filter((k) => !seen.has(k)).map((k) => `table entry no longer occurs (remove it from known.ts): ${k}`),
  ];
  return {
    mismatches: found.filter((d) => !accepted.has(differenceKey(d))).length,
    accepted: found.filter((d) => accepted.has(differenceKey(d))).length,
    failures,
  };
}

/** The run with the user's image and disk: the contract's `imageDisk` on the request and the spec. */
export const IMAGE_DISK_RUN = 'image-disk';

/**
 * One life at a fresh fixture through our adapter, then the vendor's driver at another; with
 * `imageDisk`, the request and spec carry `--image`/`--disk-gb` (and the report says so).
 */
export async function checkHttpCloud(c: HttpContract, driver = `${c.cloud}.py`, imageDisk?: HttpContract['imageDisk']): Promise<CloudReport> {
  const life = (env: ContractEnv): Promise<void> => exercise(env.provider, { ...c.request, ...imageDisk }, { ...SPEC, ...imageDisk });
  const label = imageDisk ? `${c.cloud} (${imageDisk.diskGb === undefined ? '--image' : '--image, --disk-gb'})` : c.cloud;
  return checkHttpLife(c, life, { driver, label, ...(imageDisk ? { also: `${c.cloud} ${IMAGE_DISK_RUN}` } : {}) });
}

/** How {@link checkHttpLife} runs the vendor's side and names the report. */
export interface LifeOptions {
  driver: string;
  label: string;
  /** Rows of known.ts under this name count too (see {@link judge}). */
  also?: string;
  /** Sets up the vendor's fresh fixture before its driver runs (state the driver only reads). */
  before?: (env: ContractEnv) => Promise<void> | void;
}

/**
 * `life` through our adapter at a fresh fixture, then the vendor's driver (given our requests by
 * call) at another; failures and differences as {@link checkHttpCloud} says.
 */
export async function checkHttpLife(c: HttpContract, life: (env: ContractEnv) => Promise<void>, o: LifeOptions): Promise<CloudReport> {
  const ours = await c.start();
  try {
    await life(ours);
  } finally {
    await ours.close();
  }
  const mine = byCall(c.routes, ours.http.requests);
  const vendorEnv = await c.start();
  let result;
  try {
    await o.before?.(vendorEnv);
    const sent = Object.fromEntries([...mine.calls].map(([call, reqs]) => [call, reqs.map(bare)]));
    result = await runDriver(o.driver, { url: vendorEnv.baseUrl ?? vendorEnv.http.url, credentials: vendorEnv.credentials, ours: sent });
  } finally {
    await vendorEnv.close();
  }
  const theirs = byCall(c.routes, vendorEnv.http.requests);
  const failures = [
    ...result.calls.filter((x) => !x.ok && !x.skipped).map((x) => `the vendor's client rejected the fixture at ${x.call}: ${x.error ?? ''}`),
    ...mine.stray.map((q) => `our adapter sent a request that fits no call of the contract: ${q.method} ${q.path}`),
  ];
  const notes = [
    ...result.notes,
    ...result.calls.filter((x) => x.skipped).map((x) => `${x.call} skipped: ${x.skipped ?? ''}`),
    ...theirs.stray.map((q) => `the vendor's client also sent ${q.method} ${q.path} (no call of ours)`),
  ];
  const found: Difference[] = [];
  for (const route of c.routes) {
    const o = mine.calls.get(route.call);
    const v = theirs.calls.get(route.call);
    if (!o && !v) continue;
    if (!o) notes.push(`the vendor's client made ${route.call}, which our adapter does not`);
    else if (!v && !result.calls.some((x) => x.call === route.call && x.skipped))
      found.push({ cloud: c.cloud, call: route.call, aspect: 'call', ours: 'sent', vendor: 'not sent' });
    else if (!v) continue;
    else found.push(...diffShapes(c.cloud, route.call, shapeOf(route, o, c.shape), shapeOf(route, v, c.shape)));
  }
  const j = judge(c.cloud, found, o.also);
  return {
    cloud: o.label,
    client: result.client,
    version: result.version,
    mismatches: j.mismatches,
    accepted: j.accepted,
    failures: [...failures, ...j.failures],
    notes,
  };
}
