/**
 * Pure Vast.ai → gpuprov mapping: asks → offers (on-demand, and interruptible `bid` asks as spot
 * offers), status table, an outbid instance as a preemption, direct or proxy SSH endpoint.
 */
import { shQuote } from '../cloud-init';
import type { InstanceStatus, Location, Observed, Offer, Preemption, ResourceRequest, SshEndpoint } from '../../core/provider';
import { matchOffers } from '../../core/offer-match';
import { gpuModelMatches, parseGpuName } from '../../core/gpu-names';
import type { VastBundle, VastInstance } from './api';

export const CLOUD = 'vastai';
export const SSH_USER = 'root';
const MAX_OFFERS = 20;

/** `actual_status` → normalised (`""` stands for null: still provisioning). `null` = terminal. */
export const STATUS: Record<string, InstanceStatus | null> = {
  '': 'Pending',
  created: 'Pending',
  loading: 'Pending',
  rebooting: 'Pending',
  unknown: 'Pending',
  running: 'Running',
  stopped: 'Stopped',
  frozen: 'Stopped',
  exited: 'Failed',
  offline: 'Failed',
  destroyed: null,
};

/** `"Texas, US"` → `"US"`: offers and instances are placed by country. */
export function regionOf(geolocation: string | null | undefined): string {
  const parts = (geolocation ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return parts.at(-1) ?? 'unknown';
}

/**
 * The GPU names Vast.ai's market lists (`gpu_name`), as its search filters them. A requested model
 * is sent as the names of this list it matches (`A100` → `A100 PCIE`, `A100 SXM4`); a model
 * outside it is sent as its spaced tokens (`RTX5000` → `RTX 5000`).
 */
export const VAST_GPU_NAMES = [
  'A10',
  'A100 PCIE',
  'A100 SXM4',
  'A100X',
  'A40',
  'A800 PCIE',
  'B200',
  'GH200 SXM',
  'GTX 1080 Ti',
  'H100 NVL',
  'H100 PCIE',
  'H100 SXM',
  'H200',
  'H200 NVL',
  'L4',
  'L40',
  'L40S',
  'Q RTX 6000',
  'Q RTX 8000',
  'RTX 2080 Ti',
  'RTX 3060',
  'RTX 3070',
  'RTX 3080',
  'RTX 3080 Ti',
  'RTX 3090',
  'RTX 3090 Ti',
  'RTX 4060 Ti',
  'RTX 4070',
  'RTX 4070 Ti',
  'RTX 4080',
  'RTX 4080S',
  'RTX 4090',
  'RTX 5070',
  'RTX 5080',
  'RTX 5090',
  'RTX 6000Ada',
  'RTX A4000',
  'RTX A4500',
  'RTX A5000',
  'RTX A6000',
  'RTX PRO 6000 WS',
  'Tesla T4',
  'Tesla V100',
  'Titan RTX',
];

/** Vast.ai's spellings of a requested model; memory is left to the matcher (Vast names carry none). */
export function vastGpuNames(model: string): string[] {
  const g = parseGpuName(model);
  const bare = [g.model, ...g.variants].join(' ');
  const known = VAST_GPU_NAMES.filter((n) => gpuModelMatches(bare, n));
  return known.length > 0 ? known : [[...g.tokens, ...g.variants].join(' ')];
}

/** Reliability (0..1) below which an ask is not worth a boot attempt. */
export const MIN_RELIABILITY = 0.95;

/** The search's `type`: on-demand asks, or interruptible ones (`bid`, priced at each machine's minimum bid). */
export type AskType = 'on-demand' | 'bid';

/**
 * The search body, filtered server-side (a market of thousands of asks): rentable, verified asks
 * of this GPU model and count (`gte` for `N+`), under the price cap, reliable, with room for our
 * disk, in the requested countries; priced with `allocated_storage` so `dph_total` includes the
 * disk; cheapest first. `type` picks the market.
 */
export function searchQuery(req: ResourceRequest, diskGb: number, type: AskType = 'on-demand'): Record<string, unknown> {
  const gpu = req.gpu;
  return {
    rentable: { eq: true },
    rented: { eq: false },
    verified: { eq: true },
    ...(gpu ? { gpu_name: { in: vastGpuNames(gpu.model) }, num_gpus: gpu.atLeast ? { gte: gpu.count } : { eq: gpu.count } } : {}),
    ...(req.maxPricePerHour !== undefined ? { dph_total: { lte: req.maxPricePerHour } } : {}),
    reliability: { gte: MIN_RELIABILITY },
    disk_space: { gte: diskGb },
    ...(req.regions?.length ? { geolocation: { in: req.regions } } : {}),
    type,
    allocated_storage: diskGb,
    order: [['dph_total', 'asc']],
    limit: 200,
  };
}

export function instanceTypeOf(b: Pick<VastBundle, 'gpu_name' | 'num_gpus'>): string {
  return `${b.num_gpus}x ${b.gpu_name}`;
}

/** Spot pricing beside the asks of a `bid` search: each ask's on-demand `dph_total`, by ask id (from the on-demand search). */
export interface SpotBeside {
  onDemand: ReadonlyMap<number, number>;
}

/**
 * Each ask is one machine: the offer's zone is the machine, so blocking an offer blocks that host
 * only. Cheapest first, then most reliable. With `spot` the asks are a `bid` search's: spot
 * offers priced at the machine's minimum bid plus storage (`dph_total`), the bid sent
 * (`extra.bid`) is that minimum (`min_bid`), and an ask without one is skipped.
 */
export function toOffers(bundles: VastBundle[], pricedAt: string, spot?: SpotBeside): Offer[] {
  return [...bundles]
    .filter((b) => !spot || (typeof b.min_bid === 'number' && b.min_bid > 0))
    .sort((a, b) => a.dph_total - b.dph_total || (b.reliability ?? 0) - (a.reliability ?? 0))
    .map((b): Offer => {
      const onDemand = spot?.onDemand.get(b.id);
      return {
        cloud: CLOUD,
        region: regionOf(b.geolocation),
        zone: `m${b.machine_id ?? `ask${b.id}`}`,
        instanceType: instanceTypeOf(b),
        gpu: { model: b.gpu_name, count: b.num_gpus, ...(b.gpu_ram ? { memoryGiB: Math.round(b.gpu_ram / 1024) } : {}) },
        ...(b.cpu_cores_effective ? { vcpus: Math.floor(b.cpu_cores_effective) } : {}),
        ...(b.cpu_ram ? { memoryGiB: Math.round(b.cpu_ram / 1024) } : {}),
        pricePerHour: b.dph_total,
        ...(spot ? { market: 'spot' as const, ...(onDemand === undefined ? {} : { onDemandPricePerHour: onDemand }) } : {}),
        currency: 'USD',
        priceSource: 'api',
        pricedAt,
        extra: { askId: b.id, direct: (b.direct_port_count ?? 0) > 0 && !!b.public_ipaddr, ...(spot && b.min_bid ? { bid: b.min_bid } : {}) },
      };
    });
}

/**
 * A marketplace answers hundreds of asks: the adapter keeps the {@link MAX_OFFERS} cheapest that
 * the shared matcher accepts (so the cut never drops a matching ask for a non-matching one).
 * `planOffers` applies the same matcher again.
 */
export function bestOffers(bundles: VastBundle[], req: ResourceRequest, pricedAt: string, spot?: SpotBeside): Offer[] {
  return matchOffers(toOffers(bundles, pricedAt, spot), req).offers.slice(0, MAX_OFFERS);
}

/** Direct (`public_ipaddr` + host port mapped to 22/tcp) when published, else the proxy `ssh_host:ssh_port`. */
export function sshEndpoint(i: VastInstance): SshEndpoint | undefined {
  const direct = i.ports?.['22/tcp']?.[0]?.HostPort;
  if (i.public_ipaddr && direct) return { host: i.public_ipaddr.trim(), port: Number(direct), user: SSH_USER };
  if (i.ssh_host && i.ssh_port) return { host: i.ssh_host, port: Number(i.ssh_port), user: SSH_USER };
  return undefined;
}

/**
 * An interruptible instance the market paused: outbid, or displaced by an on-demand renter
 * ("Your instance is stopped", docs.vast.ai guides/reference/faq/rental-types). The API gives no
 * notice time and no deadline, so `noticeAt` is when this look saw it.
 */
export function preemptionOf(i: VastInstance, seenAt: string): Preemption | undefined {
  if (i.is_bid !== true || i.actual_status !== 'stopped') return undefined;
  const why = [i.intended_status && `intended ${i.intended_status}`, i.status_msg].filter(Boolean).join(', ');
  return { noticeAt: seenAt, detail: `outbid: interruptible instance stopped${why ? ` (${why})` : ''}` };
}

/** `seenAt`: this look's time, the notice time of a preemption it finds. */
export function toObserved(i: VastInstance, at: Location, seenAt: string = new Date().toISOString()): Observed | undefined {
  const raw = i.actual_status ?? '';
  let status = raw in STATUS ? STATUS[raw] : 'Pending';
  if (status === null || status === undefined) return undefined;
  let reason = raw in STATUS && status !== 'Failed' ? undefined : raw;
  const preemption = preemptionOf(i, seenAt);
  // dstack's hard-failure signs: the container never started, or the host stopped it for good.
  if (raw === 'created' && /OCI runtime create failed/i.test(i.status_msg ?? '')) [status, reason] = ['Failed', i.status_msg ?? raw];
  if (raw === 'stopped' && i.intended_status === 'stopped' && !preemption) [status, reason] = ['Failed', i.status_msg ?? 'stopped by the host'];
  const endpoint = status === 'Running' ? sshEndpoint(i) : undefined;
  return {
    id: String(i.id),
    status,
    ...(reason ? { reason } : {}),
    ...(endpoint ? { endpoint } : {}),
    location: { cloud: CLOUD, region: i.geolocation ? regionOf(i.geolocation) : at.region, ...(at.zone ? { zone: at.zone } : {}) },
    ...(i.gpu_name && i.num_gpus ? { instanceType: instanceTypeOf({ gpu_name: i.gpu_name, num_gpus: i.num_gpus }) } : {}),
    ...(preemption ? { preemption } : {}),
  };
}

/** The `onstart` body: add the users' keys (the account key covers the worker), then the boot script. */
export function onstartScript(extraKeys: string[], bootScript: string | undefined): string {
  const lines = ['mkdir -p /root/.ssh && chmod 700 /root/.ssh', 'touch /root/.ssh/authorized_keys && chmod 600 /root/.ssh/authorized_keys'];
  for (const k of extraKeys) lines.push(`grep -qxF ${shQuote(k.trim())} /root/.ssh/authorized_keys || echo ${shQuote(k.trim())} >> /root/.ssh/authorized_keys`);
  if (bootScript) lines.push(bootScript.replace(/^#!.*\n/, ''));
  return lines.join('\n');
}

/**
 * The create's `env`, as the API takes it: docker port flags as keys (`"-p 22:22": "1"`) and the
 * identity as variables. The boot script's own env travels in `onstart`.
 */
export function dockerEnv(openPorts: number[], vmName: string, owner: string): Record<string, string> {
  const safe = (s: string): string => s.replace(/[^A-Za-z0-9_.@-]/g, '_');
  const ports = [...new Set([22, ...openPorts])].map((p): [string, string] => [`-p ${p}:${p}`, '1']);
  return { ...Object.fromEntries(ports), GPUPROV_VM_NAME: safe(vmName), GPUPROV_OWNER: safe(owner) };
}
