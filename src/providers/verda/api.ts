import { z } from 'zod';
import { JsonHttp, type HttpMethod } from '../http';
import { guardWith } from '../classify-http';
import { classify } from './errors';

export const DEFAULT_BASE_URL = 'https://api.verda.com/v1';

const num = z.union([z.number(), z.string()]).transform((v) => Number(v));
const Token = z
  .object({ access_token: z.string(), refresh_token: z.string().optional(), expires_in: num.optional(), token_type: z.string().optional() })
  .loose();

const InstanceType = z
  .object({
    instance_type: z.string(),
    price_per_hour: num,
    /** The spot price per hour (the verda client reads it on every type; 0 where spot is not sold). */
    spot_price: num.optional(),
    model: z.string().nullish(),
    name: z.string().nullish(),
    description: z.string().nullish(),
    gpu: z.object({ number_of_gpus: num.optional(), description: z.string().optional() }).loose().nullish(),
    cpu: z.object({ number_of_cores: num.optional() }).loose().nullish(),
    memory: z.object({ size_in_gigabytes: num.optional() }).loose().nullish(),
    gpu_memory: z.object({ size_in_gigabytes: num.optional() }).loose().nullish(),
  })
  .loose();
export type VerdaType = z.infer<typeof InstanceType>;
const Availability = z.array(z.object({ location_code: z.string(), availabilities: z.array(z.string()) }).loose());
export type VerdaAvailability = z.infer<typeof Availability>;

const Named = z.array(z.object({ id: z.string(), name: z.string() }).loose());
const SshKeys = z.array(z.object({ id: z.string(), name: z.string(), key: z.string().optional() }).loose());

const Instance = z
  .object({
    id: z.string(),
    status: z.string(),
    hostname: z.string().nullish(),
    description: z.string().nullish(),
    instance_type: z.string().nullish(),
    ip: z.union([z.string(), z.array(z.string())]).nullish(),
    location: z.string().nullish(),
    os_volume_id: z.string().nullish(),
    is_spot: z.boolean().nullish(),
  })
  .loose();
export type VerdaInstance = z.infer<typeof Instance>;

/** Ids come back as plain text; tolerate a JSON string or `{id}` too. */
const PlainId = z.union([
  z.string().min(1),
  z
    .object({ id: z.string().min(1) })
    .loose()
    .transform((o) => o.id),
]);

export interface CreateInstanceBody {
  instance_type: string;
  image: string;
  ssh_key_ids: string[];
  startup_script_id?: string;
  hostname: string;
  description: string;
  location_code: string;
  is_spot: boolean;
  /** `on_spot_discontinue`: what becomes of the OS volume when the spot market reclaims the instance (spot only). */
  os_volume?: { name: string; size: number; on_spot_discontinue?: 'delete_permanently' };
}

interface CachedToken {
  access: string;
  refresh?: string;
  expiresAt: number;
}

/**
 * The only code that talks HTTP to Verda. OAuth2 client credentials: the token is cached until
 * shortly before it expires; a 401 on a call refreshes it once and repeats that call once (not a
 * retry loop: a second 401 is a credentials error). Secrets never leave the request bodies/headers.
 */
export class VerdaApi {
  readonly #http: JsonHttp;
  /** Every call leaves with a ProviderError: this cloud's `classify` of whatever it threw. */
  readonly #guard = guardWith((err: unknown) => classify(err));
  /** Create's answers are classified as the create primitive's (there they can mean Capacity). */
  readonly #guardCreate = guardWith((err: unknown) => classify(err, 'create'));
  private token: CachedToken | undefined;
  /** One token request at a time: concurrent calls share it. */
  private pending: Promise<CachedToken> | undefined;

  constructor(
    private readonly clientId: string,
    private readonly clientSecret: string,
    baseUrl: string = DEFAULT_BASE_URL,
  ) {
    this.#http = new JsonHttp({
      baseUrl,
      auth: async () => ({ authorization: `Bearer ${(await this.valid()).access}` }),
      secrets: () => [this.clientSecret, this.token?.access, this.token?.refresh],
    });
  }

  private valid(): Promise<CachedToken> {
    return this.token && this.token.expiresAt > Date.now() ? Promise.resolve(this.token) : this.fetchToken();
  }

  private fetchToken(): Promise<CachedToken> {
    this.pending ??= this.grant().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  private async grant(): Promise<CachedToken> {
    const refresh = this.token?.refresh;
    if (refresh) {
      const r = await this.#http.send('refresh token', 'POST', '/oauth2/token', { grant_type: 'refresh_token', refresh_token: refresh }, true);
      if (r.status >= 200 && r.status < 300) return this.keep(r.body);
    }
    const r = await this.#http.send(
      'get token',
      'POST',
      '/oauth2/token',
      { grant_type: 'client_credentials', client_id: this.clientId, client_secret: this.clientSecret },
      true,
    );
    return this.keep(this.#http.check(r));
  }

  private keep(parsed: unknown): CachedToken {
    const t = Token.parse(parsed);
    this.token = {
      access: t.access_token,
      ...(t.refresh_token ? { refresh: t.refresh_token } : {}),
      expiresAt: Date.now() + ((t.expires_in ?? 3600) - 60) * 1000,
    };
    return this.token;
  }

  private async call(op: string, method: HttpMethod, path: string, body?: unknown): Promise<unknown> {
    const used = await this.valid();
    let r = await this.#http.send(op, method, path, body);
    if (r.status === 401) {
      // Expire the refused token (unless a concurrent call already replaced it); `auth` then fetches a fresh one.
      if (this.token === used) this.token = { ...used, expiresAt: 0 };
      r = await this.#http.send(op, method, path, body);
    }
    return this.#http.check(r);
  }

  async instanceTypes(): Promise<VerdaType[]> {
    return this.#guard(async () => z.array(InstanceType).parse(await this.call('list instance types', 'GET', '/instance-types?currency=usd')));
  }
  /** The types each location has now, for on-demand or (`spot`) for the spot market: the two stocks differ. */
  async availability(spot = false): Promise<VerdaAvailability> {
    return this.#guard(async () => Availability.parse(await this.call('get availability', 'GET', `/instance-availability?isSpot=${spot}`)));
  }
  async sshKeys(): Promise<z.infer<typeof SshKeys>> {
    return this.#guard(async () => SshKeys.parse(await this.call('list ssh keys', 'GET', '/sshkeys')));
  }
  async addSshKey(name: string, key: string): Promise<string> {
    return this.#guard(async () => PlainId.parse(await this.call('add ssh key', 'POST', '/sshkeys', { name, key })));
  }
  async scripts(): Promise<{ id: string; name: string }[]> {
    return this.#guard(async () => Named.parse(await this.call('list startup scripts', 'GET', '/scripts')));
  }
  async addScript(name: string, script: string): Promise<string> {
    return this.#guard(async () => PlainId.parse(await this.call('add startup script', 'POST', '/scripts', { name, script })));
  }
  async deleteScripts(ids: string[]): Promise<void> {
    return this.#guard(async () => {
      await this.call('delete startup scripts', 'DELETE', '/scripts', { scripts: ids });
    });
  }
  async createInstance(body: CreateInstanceBody): Promise<string> {
    return this.#guardCreate(async () => PlainId.parse(await this.call('create instance', 'POST', '/instances', body)));
  }
  async instances(): Promise<VerdaInstance[]> {
    return this.#guard(async () => z.array(Instance).parse(await this.call('list instances', 'GET', '/instances')));
  }
  /**
   * Deletes the instance and, permanently, the volumes named (its OS volume): the API ignores
   * `delete_permanently` without `volume_ids`, and the OS volume would outlive the instance.
   */
  async deleteInstance(id: string, volumeIds: string[]): Promise<void> {
    return this.#guard(async () => {
      await this.call('delete instance', 'PUT', '/instances', { id: [id], action: 'delete', volume_ids: volumeIds, delete_permanently: true });
    });
  }
}
