/**
 * Vast.ai API (`https://console.vast.ai`, `/api/v0` and `/api/v1`): the only file that talks HTTP
 * for this cloud. Every response is zod-parsed; the key is sent as a Bearer header only (never in
 * the query string, where it would end up in URLs and messages).
 */
import { z } from 'zod';
import { bearer } from '../http';
import { HttpApi } from '../http-api';
import { classify } from './errors';

export const DEFAULT_VAST_URL = 'https://console.vast.ai';
const MAX_PAGES = 40;

const num = z.union([z.number(), z.string().transform((s) => Number(s))]);
const Bundle = z.object({
  id: z.number(),
  machine_id: z.number().nullish(),
  dph_total: z.number(),
  gpu_name: z.string(),
  num_gpus: z.number(),
  gpu_ram: z.number().nullish(),
  cpu_ram: z.number().nullish(),
  cpu_cores_effective: z.number().nullish(),
  disk_space: z.number().nullish(),
  geolocation: z.string().nullish(),
  reliability: z.number().nullish(),
  public_ipaddr: z.string().nullish(),
  direct_port_count: z.number().nullish(),
  static_ip: z.boolean().nullish(),
  vms_enabled: z.boolean().nullish(),
  /** The machine's current minimum bid, $/h per machine (interruptible). */
  min_bid: z.number().nullish(),
});
export type VastBundle = z.infer<typeof Bundle>;

const SshKey = z.object({ id: num, key: z.string().nullish(), public_key: z.string().nullish() });
export type VastSshKey = z.infer<typeof SshKey>;

const Instance = z.object({
  id: z.number(),
  label: z.string().nullish(),
  machine_id: z.number().nullish(),
  actual_status: z.string().nullish(),
  intended_status: z.string().nullish(),
  cur_state: z.string().nullish(),
  next_state: z.string().nullish(),
  status_msg: z.string().nullish(),
  public_ipaddr: z.string().nullish(),
  ssh_host: z.string().nullish(),
  ssh_port: num.nullish(),
  ports: z.record(z.string(), z.array(z.object({ HostIp: z.string().nullish(), HostPort: num })).nullish()).nullish(),
  geolocation: z.string().nullish(),
  gpu_name: z.string().nullish(),
  num_gpus: z.number().nullish(),
  dph_total: z.number().nullish(),
  /** An interruptible (bid) instance. */
  is_bid: z.boolean().nullish(),
});
export type VastInstance = z.infer<typeof Instance>;

export interface CreateBody {
  client_id: 'me';
  image: string;
  label: string;
  disk: number;
  /** Direct SSH (public IP, mapped port) with the proxy as fallback, or the proxy only. */
  runtype: 'ssh_direc ssh_proxy' | 'ssh_proxy';
  /** Docker flags as keys (`"-p 22:22": "1"`) and environment variables. */
  env: Record<string, string>;
  onstart: string;
  cancel_unavail: boolean;
  /** Interruptible only: the bid, $/h per machine; absent = on-demand. */
  price?: number;
}

export class VastApi extends HttpApi {
  constructor(opts: { apiKey: string; baseUrl: string }) {
    // A 2xx answer with `{success: false}` is a failure too.
    const failed = (b: unknown): boolean => typeof b === 'object' && b !== null && (b as { success?: unknown }).success === false;
    super({ baseUrl: opts.baseUrl, auth: bearer(opts.apiKey), failed }, classify);
  }

  async searchOffers(query: Record<string, unknown>): Promise<VastBundle[]> {
    return (await this.json('search', 'POST', '/api/v0/bundles/', z.object({ offers: z.array(Bundle) }), query)).offers;
  }

  async sshKeys(): Promise<VastSshKey[]> {
    return this.guard(async () => {
      const raw = await this.http.call('ssh-keys', 'GET', '/api/v0/ssh/');
      return z.union([z.array(SshKey), z.object({ ssh_keys: z.array(SshKey) }).transform((r) => r.ssh_keys)]).parse(raw);
    });
  }

  async addSshKey(publicKey: string): Promise<VastSshKey> {
    return (await this.json('add-ssh-key', 'POST', '/api/v0/ssh/', z.object({ key: SshKey }), { ssh_key: publicKey })).key;
  }

  /** Accept an ask. Returns the new instance (contract) id. */
  async create(askId: number, body: CreateBody): Promise<number> {
    return (await this.json('create', 'PUT', `/api/v0/asks/${askId}/`, z.object({ new_contract: num }), body)).new_contract;
  }

  /** Instances whose label is exactly `label` (server-side filter; without a label every instance), keyset pages of 25. */
  async instancesByLabel(label?: string): Promise<VastInstance[]> {
    return this.guard(async () => {
      const Page = z.object({ instances: z.array(Instance), next_token: z.string().nullish() });
      const out: VastInstance[] = [];
      let token: string | undefined;
      for (let i = 0; i < MAX_PAGES; i++) {
        const filters: Record<string, string> = label === undefined ? {} : { select_filters: JSON.stringify({ label: { eq: label } }) };
        const q = new URLSearchParams({ ...filters, limit: '25', ...(token ? { after_token: token } : {}) });
        const r = Page.parse(await this.http.call('list', 'GET', `/api/v1/instances/?${q.toString()}`));
        out.push(...r.instances);
        token = r.next_token ?? undefined;
        if (!token || r.instances.length === 0) break;
      }
      return out;
    });
  }

  async destroy(id: string): Promise<void> {
    return this.guard(async () => {
      await this.http.call('delete', 'DELETE', `/api/v0/instances/${encodeURIComponent(id)}/`);
    });
  }
}
