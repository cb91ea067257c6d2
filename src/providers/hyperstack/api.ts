import { z } from 'zod';
import { HttpApi } from '../http-api';
import { classify } from './errors';

export const DEFAULT_BASE_URL = 'https://infrahub-api.nexgencloud.com/v1';

const num = z.union([z.number(), z.string()]).transform((v) => Number(v));
/** Environment appears as a name or as an object, depending on the endpoint version. */
const envRef = z.union([z.string(), z.object({ name: z.string() }).loose()]).nullish();

const Flavor = z
  .object({
    id: z.number().optional(),
    name: z.string(),
    region_name: z.string(),
    cpu: z.number().nullish(),
    ram: z.number().nullish(),
    gpu: z.string().nullish(),
    gpu_count: z.number().nullish(),
    stock_available: z.boolean().nullish(),
  })
  .loose();
export type HsFlavor = z.infer<typeof Flavor>;
const FlavorsResp = z
  .object({ data: z.array(z.object({ gpu: z.string().nullish(), region_name: z.string().optional(), flavors: z.array(Flavor) }).loose()) })
  .loose();

const PriceEntry = z.object({ name: z.string(), value: num }).loose();
export type HsPrice = z.infer<typeof PriceEntry>;

const Environment = z.object({ id: z.number().optional(), name: z.string(), region: z.string().optional() }).loose();
const EnvironmentsResp = z.object({ environments: z.array(Environment) }).loose();

const Keypair = z.object({ id: z.number().optional(), name: z.string(), environment: envRef, public_key: z.string().optional() }).loose();
const KeypairsResp = z.object({ keypairs: z.array(Keypair) }).loose();

const Instance = z
  .object({
    id: z.number(),
    name: z.string(),
    status: z.string(),
    vm_state: z.string().nullish(),
    floating_ip: z.string().nullish(),
    floating_ip_status: z.string().nullish(),
    labels: z.array(z.union([z.string(), z.object({ label: z.string() }).loose()])).nullish(),
    environment: envRef,
    flavor: z.union([z.string(), z.object({ name: z.string() }).loose()]).nullish(),
  })
  .loose();
export type HsInstance = z.infer<typeof Instance>;
const ListResp = z.object({ instances: z.array(Instance), count: z.number().optional(), page: num.optional(), page_size: num.optional() }).loose();
const CreateResp = z.object({ instances: z.array(z.object({ id: z.number() }).loose()).min(1) }).loose();

export interface CreateVmBody {
  name: string;
  environment_name: string;
  image_name: string;
  flavor_name: string;
  key_name: string;
  count: 1;
  user_data: string;
  labels: string[];
  assign_floating_ip: true;
  enable_port_randomization: false;
  security_rules: { direction: 'ingress'; protocol: 'tcp'; ethertype: 'IPv4'; remote_ip_prefix: string; port_range_min: number; port_range_max: number }[];
}

/** The only code that talks HTTP to Hyperstack. Every response is zod-parsed; the key travels only in the `api_key` header. */
export class HyperstackApi extends HttpApi {
  constructor(apiKey: string, baseUrl: string = DEFAULT_BASE_URL) {
    const auth = { api_key: apiKey };
    super({ baseUrl, auth: () => auth }, classify);
  }

  async flavors(): Promise<HsFlavor[]> {
    return this.guard(async () => {
      const r = FlavorsResp.parse(await this.http.call('list flavors', 'GET', '/core/flavors'));
      return r.data.flatMap((g) => g.flavors);
    });
  }

  /** The pricebook is a bare array (no envelope). */
  async pricebook(): Promise<HsPrice[]> {
    return this.json('get pricebook', 'GET', '/pricebook', z.array(PriceEntry));
  }

  async environments(): Promise<{ name: string; region?: string }[]> {
    return (await this.json('list environments', 'GET', '/core/environments', EnvironmentsResp)).environments;
  }

  async createEnvironment(name: string, region: string): Promise<void> {
    return this.guard(async () => {
      await this.http.call('create environment', 'POST', '/core/environments', { name, region });
    });
  }

  async keypairs(): Promise<{ name: string; environment: string | undefined; publicKey: string | undefined }[]> {
    return this.guard(async () => {
      const r = KeypairsResp.parse(await this.http.call('list keypairs', 'GET', '/core/keypairs'));
      return r.keypairs.map((k) => ({ name: k.name, environment: envName(k.environment), publicKey: k.public_key }));
    });
  }

  async createKeypair(name: string, environmentName: string, publicKey: string): Promise<void> {
    return this.guard(async () => {
      await this.http.call('create keypair', 'POST', '/core/keypairs', { name, environment_name: environmentName, public_key: publicKey });
    });
  }

  async createVm(body: CreateVmBody): Promise<number> {
    return (await this.json('create virtual machine', 'POST', '/core/virtual-machines', CreateResp, body)).instances[0]!.id;
  }

  /** Every VM in `environment` whose name or id matches `search`, all pages. */
  async listVms(environment: string, search: string, pageSize: number): Promise<HsInstance[]> {
    return this.guard(async () => {
      const out: HsInstance[] = [];
      for (let page = 1; ; page++) {
        const q = new URLSearchParams({ page: String(page), pageSize: String(pageSize), search, environment, exact_environment_match: 'true' });
        const r = ListResp.parse(await this.http.call('list virtual machines', 'GET', `/core/virtual-machines?${q.toString()}`));
        out.push(...r.instances);
        if (r.instances.length < pageSize || (r.count !== undefined && out.length >= r.count)) return out;
      }
    });
  }

  /** False when the VM is already gone (404 not_found). */
  async deleteVm(id: string): Promise<boolean> {
    return this.unlessGone('delete virtual machine', 'DELETE', `/core/virtual-machines/${encodeURIComponent(id)}`);
  }
}

export function envName(e: z.infer<typeof envRef>): string | undefined {
  return e == null ? undefined : typeof e === 'string' ? e : e.name;
}
