import { z } from 'zod';
import { HttpError, bearer } from '../http';
import { guardWith } from '../classify-http';
import { HttpApi } from '../http-api';
import { classify } from './errors';

export const DEFAULT_BASE_URL = 'https://api.digitalocean.com';

const Links = z
  .object({ pages: z.object({ next: z.string().optional() }).loose().optional() })
  .loose()
  .optional();

const Size = z
  .object({
    slug: z.string(),
    vcpus: z.number().optional(),
    memory: z.number().optional(),
    price_hourly: z.number(),
    regions: z.array(z.string()),
    available: z.boolean(),
    gpu_info: z
      .object({
        count: z.number().optional(),
        model: z.string().optional(),
        vram: z.object({ amount: z.number().optional(), unit: z.string().optional() }).loose().optional(),
      })
      .loose()
      .nullish(),
  })
  .loose();
export type DoSize = z.infer<typeof Size>;

const Key = z.object({ id: z.number(), fingerprint: z.string(), public_key: z.string(), name: z.string() }).loose();
export type DoKey = z.infer<typeof Key>;

const Droplet = z
  .object({
    id: z.number(),
    name: z.string(),
    status: z.string(),
    tags: z.array(z.string()).default([]),
    size_slug: z.string().optional(),
    region: z.object({ slug: z.string() }).loose(),
    networks: z
      .object({ v4: z.array(z.object({ ip_address: z.string(), type: z.string() }).loose()).default([]) })
      .loose()
      .optional(),
  })
  .loose();
export type DoDroplet = z.infer<typeof Droplet>;

const Firewall = z.object({ id: z.string(), name: z.string(), tags: z.array(z.string()).default([]) }).loose();
export type DoFirewall = z.infer<typeof Firewall>;

/** One firewall rule; `ports` is a string: one port, a range, or "0" for all (ICMP: "0"). */
export interface DoFirewallRule {
  protocol: 'tcp' | 'udp' | 'icmp';
  ports: string;
  sources?: { addresses: string[] };
  destinations?: { addresses: string[] };
}

export interface CreateFirewallBody {
  name: string;
  inbound_rules: DoFirewallRule[];
  outbound_rules: DoFirewallRule[];
  /** Droplets carrying any of these tags are covered, from the moment they exist. */
  tags: string[];
}

export interface CreateDropletBody {
  name: string;
  region: string;
  size: string;
  /** A slug, or an image id. */
  image: string | number;
  ssh_keys: (number | string)[];
  tags: string[];
  user_data: string;
}

/** The only code that talks HTTP to DigitalOcean. Every response is zod-parsed; the token travels only in the Authorization header. */
export class DoApi extends HttpApi {
  /** Create's answers are classified as the create primitive's (there they can mean Capacity). */
  readonly #guardCreate = guardWith((err: unknown) => classify(err, 'create'));

  constructor(
    token: string,
    baseUrl: string = DEFAULT_BASE_URL,
    private readonly perPage = 200,
  ) {
    super({ baseUrl, auth: bearer(token) }, classify);
  }

  /**
   * Every page of a list. `links.pages.next` is absolute; only its path and query are followed,
   * against our own base URL, so the token never goes to another host.
   */
  private async all<T>(op: string, path: string, query: Record<string, string>, key: string, item: z.ZodType<T>): Promise<T[]> {
    const page = z.object({ [key]: z.array(item), links: Links }).loose();
    const out: T[] = [];
    let next: string | undefined = `${path}?${new URLSearchParams({ ...query, per_page: String(this.perPage) }).toString()}`;
    while (next !== undefined) {
      const r = page.parse(await this.http.call(op, 'GET', next)) as Record<string, unknown> & { links?: { pages?: { next?: string } } };
      out.push(...(r[key] as T[]));
      const n = r.links?.pages?.next;
      next = n === undefined ? undefined : ((u) => `${u.pathname}${u.search}`)(new URL(n, 'https://placeholder.invalid'));
    }
    return out;
  }

  async sizes(): Promise<DoSize[]> {
    return this.guard(async () => this.all('list sizes', '/v2/sizes', {}, 'sizes', Size));
  }

  async keys(): Promise<DoKey[]> {
    return this.guard(async () => this.all('list ssh keys', '/v2/account/keys', {}, 'ssh_keys', Key));
  }

  async addKey(name: string, publicKey: string): Promise<DoKey> {
    return (await this.json('add ssh key', 'POST', '/v2/account/keys', z.object({ ssh_key: Key }).loose(), { name, public_key: publicKey })).ssh_key;
  }

  async createDroplet(body: CreateDropletBody): Promise<number> {
    return this.#guardCreate(
      async () =>
        z
          .object({ droplet: z.object({ id: z.number() }).loose() })
          .loose()
          .parse(await this.http.call('create droplet', 'POST', '/v2/droplets', body)).droplet.id,
    );
  }

  /** Every cloud firewall of the account (paginated). */
  async firewalls(): Promise<DoFirewall[]> {
    return this.guard(async () => this.all('list firewalls', '/v2/firewalls', {}, 'firewalls', Firewall));
  }

  /** Create a tag; an existing one (DO answers 201 again, or 422) counts as done. */
  async createTag(name: string): Promise<void> {
    return this.guard(async () => {
      try {
        await this.http.call('create tag', 'POST', '/v2/tags', { name });
      } catch (err) {
        if (err instanceof HttpError && err.status === 422) return;
        throw err;
      }
    });
  }

  async createFirewall(body: CreateFirewallBody): Promise<DoFirewall> {
    return (await this.json('create firewall', 'POST', '/v2/firewalls', z.object({ firewall: Firewall }).loose(), body)).firewall;
  }

  /** False when the firewall is already gone (404). */
  async deleteFirewall(id: string): Promise<boolean> {
    return this.unlessGone('delete firewall', 'DELETE', `/v2/firewalls/${encodeURIComponent(id)}`);
  }

  /** Droplets carrying `tag` (tag_name cannot be combined with type). */
  async dropletsByTag(tag: string): Promise<DoDroplet[]> {
    return this.guard(async () => this.all('list droplets', '/v2/droplets', { tag_name: tag }, 'droplets', Droplet));
  }

  /** GPU droplets: the default listing excludes them; `type=gpus` is the only way to be sure to see them. */
  async gpuDroplets(): Promise<DoDroplet[]> {
    return this.guard(async () => this.all('list gpu droplets', '/v2/droplets', { type: 'gpus' }, 'droplets', Droplet));
  }

  /** False when the droplet is already gone (404). */
  async deleteDroplet(id: string): Promise<boolean> {
    return this.unlessGone('delete droplet', 'DELETE', `/v2/droplets/${encodeURIComponent(id)}`);
  }
}
