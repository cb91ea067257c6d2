/**
 * Prime Intellect REST API v1: the only file that talks HTTP for this cloud. Lists are paginated
 * (availability by page, pods and SSH keys by offset); each call follows its own pages only.
 */
import { z } from 'zod';
import { bearer } from '../http';
import { HttpApi } from '../http-api';
import { classify } from './errors';

export const DEFAULT_PRIME_URL = 'https://api.primeintellect.ai/api/v1';
const MAX_PAGES = 50;

const Resource = z
  .object({ minCount: z.number().nullish(), defaultCount: z.number().nullish(), maxCount: z.number().nullish(), pricePerUnit: z.number().nullish() })
  .nullish();
const Availability = z.object({
  cloudId: z.string(),
  gpuType: z.string(),
  socket: z.string().nullish(),
  provider: z.string().nullish(),
  dataCenter: z.string().nullish(),
  country: z.string().nullish(),
  gpuCount: z.number(),
  gpuMemory: z.number().nullish(),
  disk: Resource,
  vcpu: Resource,
  memory: Resource,
  stockStatus: z.string().nullish(),
  security: z.string().nullish(),
  prices: z
    .object({ onDemand: z.number().nullish(), communityPrice: z.number().nullish(), isVariable: z.boolean().nullish(), currency: z.string().nullish() })
    .nullish(),
  images: z.array(z.string()).nullish(),
  isSpot: z.boolean().nullish(),
});
export type PrimeAvailability = z.infer<typeof Availability>;

const SshKey = z.object({ id: z.string(), name: z.string().nullish(), publicKey: z.string().nullish() });
export type PrimeSshKey = z.infer<typeof SshKey>;

/** `sshConnection` / `ip`: a string, a list (possibly `[null]`), or null. */
const Loose = z.union([z.string(), z.array(z.string().nullable()), z.null()]).optional();
const Pod = z.object({
  id: z.string(),
  name: z.string().nullish(),
  providerType: z.string().nullish(),
  gpuName: z.string().nullish(),
  gpuCount: z.number().nullish(),
  priceHr: z.number().nullish(),
  status: z.string(),
  installationStatus: z.string().nullish(),
  installationFailure: z.string().nullish(),
  ip: Loose,
  sshConnection: Loose,
  dataCenterId: z.string().nullish(),
  /** A spot pod (made from an `isSpot` availability's `cloudId`). */
  isSpot: z.boolean().nullish(),
});
export type PrimePod = z.infer<typeof Pod>;

const PodStatus = z.object({
  podId: z.string(),
  status: z.string(),
  sshConnection: Loose,
  ip: Loose,
  installationStatus: z.string().nullish(),
  installationFailure: z.string().nullish(),
});
export type PrimePodStatus = z.infer<typeof PodStatus>;

export interface CreatePodBody {
  pod: Record<string, unknown>;
  provider: { type: string };
}

export class PrimeApi extends HttpApi {
  constructor(opts: { apiKey: string; baseUrl: string }) {
    super({ baseUrl: opts.baseUrl, auth: bearer(opts.apiKey) }, classify);
  }

  /** All availability items for `gpu_count` (page by page). */
  async availability(gpuCount: number): Promise<PrimeAvailability[]> {
    return this.guard(async () => {
      const Page = z.object({ items: z.array(Availability), totalCount: z.number().nullish() });
      const out: PrimeAvailability[] = [];
      for (let page = 1; page <= MAX_PAGES; page++) {
        const q = new URLSearchParams({ gpu_count: String(gpuCount), page: String(page), page_size: '100' });
        const r = Page.parse(await this.http.call('availability', 'GET', `/availability/gpus?${q.toString()}`));
        out.push(...r.items);
        if (r.items.length === 0 || out.length >= (r.totalCount ?? out.length)) break;
      }
      return out;
    });
  }

  async sshKeys(): Promise<PrimeSshKey[]> {
    return this.guard(async () => {
      const Page = z.object({ data: z.array(SshKey), totalCount: z.number().nullish() });
      const out: PrimeSshKey[] = [];
      for (let i = 0; i < MAX_PAGES; i++) {
        const r = Page.parse(await this.http.call('ssh-keys', 'GET', `/ssh_keys?offset=${out.length}&limit=100`));
        out.push(...r.data);
        if (r.data.length === 0 || out.length >= (r.totalCount ?? out.length)) break;
      }
      return out;
    });
  }

  async addSshKey(name: string, publicKey: string): Promise<PrimeSshKey> {
    return this.json('add-ssh-key', 'POST', '/ssh_keys', SshKey, { name, publicKey });
  }

  async createPod(body: CreatePodBody): Promise<PrimePod> {
    return this.json('create', 'POST', '/pods', Pod, body);
  }

  /** Every pod of the account: there is no name filter. */
  async pods(): Promise<PrimePod[]> {
    return this.guard(async () => {
      const Page = z.object({ data: z.array(Pod), total_count: z.number().nullish(), totalCount: z.number().nullish() });
      const out: PrimePod[] = [];
      for (let i = 0; i < MAX_PAGES; i++) {
        const r = Page.parse(await this.http.call('list', 'GET', `/pods?offset=${out.length}&limit=100`));
        out.push(...r.data);
        if (r.data.length === 0 || out.length >= (r.total_count ?? r.totalCount ?? out.length)) break;
      }
      return out;
    });
  }

  async podStatus(ids: string[]): Promise<PrimePodStatus[]> {
    return this.guard(async () => {
      const q = new URLSearchParams(ids.map((id): [string, string] => ['pod_ids', id]));
      return z.object({ data: z.array(PodStatus) }).parse(await this.http.call('status', 'GET', `/pods/status?${q.toString()}`)).data;
    });
  }

  /** False when the pod is already gone (404). */
  async deletePod(id: string): Promise<boolean> {
    return this.unlessGone('delete', 'DELETE', `/pods/${encodeURIComponent(id)}`);
  }
}
