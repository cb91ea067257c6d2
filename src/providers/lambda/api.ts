/**
 * Lambda Cloud REST API v1: the only file that talks HTTP for this cloud. Every response is
 * zod-parsed; the API key lives in a private field and never reaches a message or a log.
 */
import { request } from 'undici';
import { z } from 'zod';

export const DEFAULT_LAMBDA_URL = 'https://cloud.lambda.ai/api/v1';

/** A non-2xx answer: status, parsed body and Retry-After; never the request headers. */
export class LambdaHttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly retryAfter?: string,
  ) {
    super(`Lambda API answered HTTP ${status}`);
    this.name = 'LambdaHttpError';
  }
}

const Specs = z.object({ vcpus: z.number(), memory_gib: z.number(), storage_gib: z.number().optional(), gpus: z.number() });
const InstanceTypeEntry = z.object({
  instance_type: z.object({
    name: z.string(),
    description: z.string().optional(),
    gpu_description: z.string().optional(),
    price_cents_per_hour: z.number(),
    specs: Specs,
  }),
  regions_with_capacity_available: z.array(z.object({ name: z.string(), description: z.string().optional() })),
});
export type LambdaInstanceTypeEntry = z.infer<typeof InstanceTypeEntry>;

const SshKey = z.object({ id: z.string(), name: z.string(), public_key: z.string() });
export type LambdaSshKey = z.infer<typeof SshKey>;

const Tag = z.object({ key: z.string(), value: z.string() });
const Instance = z.object({
  id: z.string(),
  name: z.string().nullish(),
  ip: z.string().nullish(),
  private_ip: z.string().nullish(),
  status: z.string(),
  hostname: z.string().nullish(),
  region: z.object({ name: z.string() }).optional(),
  instance_type: z.object({ name: z.string() }).partial().optional(),
  ssh_key_names: z.array(z.string()).optional(),
  tags: z.array(Tag).nullish(),
});
export type LambdaInstance = z.infer<typeof Instance>;

const data = <T extends z.ZodType>(t: T) => z.object({ data: t });

/** The launch body, as the v1 spec names its fields. */
export interface LaunchBody {
  region_name: string;
  instance_type_name: string;
  ssh_key_names: [string];
  name: string;
  user_data?: string;
  tags: { key: string; value: string }[];
  image?: { family: string } | { id: string };
}

export interface LambdaApiOptions {
  apiKey: string;
  baseUrl: string;
}

export class LambdaApi {
  readonly #key: string;
  readonly #base: string;

  constructor(opts: LambdaApiOptions) {
    this.#key = opts.apiKey;
    this.#base = opts.baseUrl.replace(/\/+$/, '');
  }

  private async call(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<unknown> {
    const res = await request(this.#base + path, {
      method,
      headers: {
        authorization: `Bearer ${this.#key}`,
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
    const text = await res.body.text();
    let json: unknown = undefined;
    if (text) {
      try {
        json = JSON.parse(text);
      } catch {
        json = text;
      }
    }
    if (res.statusCode >= 400) {
      const ra = res.headers['retry-after'];
      throw new LambdaHttpError(res.statusCode, json, typeof ra === 'string' ? ra : undefined);
    }
    return json;
  }

  async instanceTypes(): Promise<Record<string, LambdaInstanceTypeEntry>> {
    return data(z.record(z.string(), InstanceTypeEntry)).parse(await this.call('GET', '/instance-types')).data;
  }

  async sshKeys(): Promise<LambdaSshKey[]> {
    return data(z.array(SshKey)).parse(await this.call('GET', '/ssh-keys')).data;
  }

  async addSshKey(name: string, publicKey: string): Promise<LambdaSshKey> {
    return data(SshKey).parse(await this.call('POST', '/ssh-keys', { name, public_key: publicKey })).data;
  }

  async launch(body: LaunchBody): Promise<string[]> {
    return data(z.object({ instance_ids: z.array(z.string()) })).parse(await this.call('POST', '/instance-operations/launch', body)).data.instance_ids;
  }

  /** Every instance of the account: the API has no name/tag filter and no pagination. */
  async instances(): Promise<LambdaInstance[]> {
    return data(z.array(Instance)).parse(await this.call('GET', '/instances')).data;
  }

  async terminate(ids: string[]): Promise<void> {
    data(z.object({ terminated_instances: z.array(Instance) })).parse(await this.call('POST', '/instance-operations/terminate', { instance_ids: ids }));
  }
}
