/**
 * EC2 vCPU quotas from AWS Service Quotas (GetServiceQuota, service code `ec2`), for the plan's
 * pre-check: an offer whose family's regional vCPU quota, less the vCPUs of the account's running
 * instances of that family (DescribeInstances, in api.ts), cannot fit it is skipped. A quota not
 * read (AccessDenied, no such quota in the region, no answer) judges nothing: its offers are kept.
 * https://docs.aws.amazon.com/ec2/latest/instancetypes/ec2-instance-quotas.html
 */
import type * as QuotasSdk from '@aws-sdk/client-service-quotas';
import { z } from 'zod';
import { ProviderError } from '../../core/errors';
import type { Offer, QuotaShortfall, QuotaUnknown } from '../../core/provider';
import { CATALOG } from './catalog';
import { connectionConfig, perRegion, type AwsConnection } from './clients';
import type { Ec2Instance } from './map';

/** The vCPU quota classes gpuprov's catalog falls in; other families (Inf, Trn, DL, F, X, U, HPC, Mac) have their own quotas and are not judged. */
type QuotaClass = 'G' | 'P' | 'Standard';

/** Family prefix (the letters before the generation digit: `g4dn` → `g`) → quota class. */
const FAMILY_CLASS: Readonly<Record<string, QuotaClass>> = {
  g: 'G',
  gr: 'G', // gr6: G family with more memory per GPU
  vt: 'G', // VT1 video transcoding shares the G quota
  p: 'P',
  a: 'Standard',
  c: 'Standard',
  d: 'Standard',
  h: 'Standard',
  i: 'Standard',
  im: 'Standard', // im4gn: an I family variant
  is: 'Standard', // is4gen: likewise
  m: 'Standard',
  r: 'Standard',
  t: 'Standard',
  z: 'Standard',
};

/** Service Quotas codes (service `ec2`), on-demand and spot, with AWS's names for the plan's story. */
export const QUOTA_CODES: Readonly<Record<QuotaClass, { onDemand: [string, string]; spot: [string, string] }>> = {
  G: { onDemand: ['L-DB2E81BA', 'Running On-Demand G and VT instances'], spot: ['L-3819A6DF', 'All G and VT Spot Instance Requests'] },
  P: { onDemand: ['L-417A185B', 'Running On-Demand P instances'], spot: ['L-7212CCBC', 'All P Spot Instance Requests'] },
  Standard: {
    onDemand: ['L-1216C47A', 'Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances'],
    spot: ['L-34B43A08', 'All Standard (A, C, D, H, I, M, R, T, Z) Spot Instance Requests'],
  },
};

/** The quota an instance type counts against (code and name), or undefined when gpuprov does not judge its family. */
export function quotaOf(instanceType: string, spot = false): { code: string; name: string } | undefined {
  const prefix = /^[a-z]+/.exec(instanceType)?.[0] ?? '';
  const cls = FAMILY_CLASS[prefix];
  if (!cls) return undefined;
  const [code, name] = spot ? QUOTA_CODES[cls].spot : QUOTA_CODES[cls].onDemand;
  return { code, name };
}

/** The vCPUs a running instance holds: its type's default count (the catalog's), else its CPU options, else unknown. */
export function vcpusOf(i: Ec2Instance): number | undefined {
  const listed = CATALOG.find((e) => e.instanceType === i.InstanceType)?.vcpus;
  if (listed !== undefined) return listed;
  const c = i.CpuOptions;
  return c?.CoreCount !== undefined && c.ThreadsPerCore !== undefined ? c.CoreCount * c.ThreadsPerCore : undefined;
}

/** One quota's limit, or why it is unknown. */
export type QuotaLimit = { value: number } | { unknown: string };

/**
 * The verdicts for one region (pure): each offer whose quota's free vCPUs (limit − in use) are
 * fewer than it needs, and each quota that could not be judged (limit not read, usage not counted).
 * `running` is the region's pending and running instances, or why they could not be listed.
 */
export function quotaVerdicts(
  region: string,
  offers: readonly Offer[],
  limits: ReadonlyMap<string, QuotaLimit>,
  running: readonly Ec2Instance[] | { unknown: string },
): (QuotaShortfall | QuotaUnknown)[] {
  const out: (QuotaShortfall | QuotaUnknown)[] = [];
  const used = new Map<string, number>();
  /** Quotas whose usage cannot be counted: an instance of unknown size holds some. */
  const uncounted = new Map<string, string>();
  for (const i of 'unknown' in running ? [] : running) {
    const q = i.InstanceType ? quotaOf(i.InstanceType, i.InstanceLifecycle === 'spot') : undefined;
    const n = vcpusOf(i);
    if (!q) continue;
    if (n === undefined) uncounted.set(q.code, `vCPUs of ${i.InstanceId} (${i.InstanceType}) unknown`);
    else used.set(q.code, (used.get(q.code) ?? 0) + n);
  }
  const unknown = new Set<string>();
  for (const [code, limit] of limits) {
    const why = 'unknown' in limit ? limit.unknown : 'unknown' in running ? running.unknown : uncounted.get(code);
    if (why === undefined) continue;
    unknown.add(code);
    out.push({ unknown: true, region, message: `quota ${code} in ${region} not checked (${why}): its offers are kept` });
  }
  for (const o of offers) {
    const q = quotaOf(o.instanceType, o.spot);
    const limit = q ? limits.get(q.code) : undefined;
    if (!q || !limit || 'unknown' in limit || unknown.has(q.code) || o.vcpus === undefined) continue;
    const inUse = used.get(q.code) ?? 0;
    const free = Math.max(0, limit.value - inUse);
    if (free >= o.vcpus) continue;
    out.push({
      region,
      instanceType: o.instanceType,
      message: `quota ${q.code} (${q.name}) in ${region}: ${free} of ${limit.value} vCPUs free (${inUse} in use), ${o.instanceType} needs ${o.vcpus}`,
    });
  }
  return out;
}

let sdk: typeof QuotasSdk | undefined;

/** @aws-sdk/client-service-quotas, loaded with the first read (like client-ec2 in api.ts: only a worker with AWS credentials carries it). */
function quotasSdk(): typeof QuotasSdk {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- deferred on purpose (see above)
  sdk ??= require('@aws-sdk/client-service-quotas') as typeof QuotasSdk;
  return sdk;
}

const Answer = z.object({ Quota: z.object({ QuotaCode: z.string().optional(), Value: z.number() }) });

/** Why a read failed, without the vendor's text (it can name the caller's ARN). */
function reasonOf(err: unknown): string {
  const e = (typeof err === 'object' && err !== null ? err : {}) as { name?: unknown; code?: unknown };
  const name = typeof e.name === 'string' && e.name !== 'Error' ? e.name : typeof e.code === 'string' ? e.code : 'no answer';
  if (name === 'AccessDeniedException') return 'AccessDeniedException: grant servicequotas:GetServiceQuota';
  if (name === 'NoSuchResourceException') return 'NoSuchResourceException: no such quota in this region';
  return name;
}

/** The connection's endpoint is the Service Quotas one (per region). */
export interface AwsQuotasOptions extends AwsConnection {
  /** How long a limit read is reused (ms); limits change only when AWS grants an increase. Default 10 minutes. */
  cacheMs?: number;
}

/** Reads EC2 vCPU quota limits. Never throws: a failed read is a `{ unknown }` limit. */
export class AwsQuotas {
  private readonly cache = new Map<string, { value: number; at: number }>();
  private readonly client = perRegion(
    (region) =>
      new (quotasSdk().ServiceQuotasClient)({
        region,
        maxAttempts: 1,
        // A pre-check must not hold the plan up: an endpoint that does not answer is a quota not read.
        requestHandler: { connectionTimeout: 3_000, requestTimeout: 10_000 },
        ...connectionConfig(this.opts),
      }),
  );

  constructor(private readonly opts: AwsQuotasOptions = {}) {}

  /** The limits (vCPUs) of `codes` in `region`, each read once per cache period. */
  async limits(region: string, codes: readonly string[]): Promise<Map<string, QuotaLimit>> {
    const now = Date.now();
    const read = async (code: string): Promise<[string, QuotaLimit]> => {
      const hit = this.cache.get(`${region}/${code}`);
      if (hit && now - hit.at < (this.opts.cacheMs ?? 10 * 60_000)) return [code, { value: hit.value }];
      try {
        const out = Answer.parse(await this.client(region).send(new (quotasSdk().GetServiceQuotaCommand)({ ServiceCode: 'ec2', QuotaCode: code })));
        this.cache.set(`${region}/${code}`, { value: out.Quota.Value, at: now });
        return [code, { value: out.Quota.Value }];
      } catch (err) {
        return [code, { unknown: err instanceof z.ZodError ? 'unexpected answer' : reasonOf(err) }];
      }
    };
    return new Map(await Promise.all(codes.map(read)));
  }

  /**
   * Per region of the offers: one GetServiceQuota per quota their families count against, and one
   * listing of the account's pending and running instances (`running`, DescribeInstances).
   */
  async shortfalls(offers: readonly Offer[], running: (region: string) => Promise<Ec2Instance[]>): Promise<(QuotaShortfall | QuotaUnknown)[]> {
    const regions = [...new Set(offers.map((o) => o.region))];
    const perRegion = await Promise.all(
      regions.map(async (region) => {
        const here = offers.filter((o) => o.region === region);
        const codes = [...new Set(here.flatMap((o) => quotaOf(o.instanceType, o.spot)?.code ?? []))];
        if (codes.length === 0) return [];
        const [limits, listed] = await Promise.all([
          this.limits(region, codes),
          running(region).catch((err: unknown) => ({
            unknown: `running instances not listed: ${err instanceof ProviderError ? (err.code ?? err.kind) : 'no answer'}`,
          })),
        ]);
        return quotaVerdicts(region, here, limits, listed);
      }),
    );
    return perRegion.flat();
  }
}
