/**
 * Lambda Cloud REST API v1: the only file that talks HTTP for this cloud. Every response is
 * zod-parsed; the API key goes only into the Authorization header, never a message or a log.
 */
import { z } from 'zod';
import { bearer } from '../http';
import { HttpApi } from '../http-api';
import { classify } from './errors';

export const DEFAULT_LAMBDA_URL = 'https://cloud.lambda.ai/api/v1';

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

export class LambdaApi extends HttpApi {
  constructor(opts: LambdaApiOptions) {
    super({ baseUrl: opts.baseUrl, auth: bearer(opts.apiKey) }, classify);
  }

  async instanceTypes(): Promise<Record<string, LambdaInstanceTypeEntry>> {
    return (await this.json('instance-types', 'GET', '/instance-types', data(z.record(z.string(), InstanceTypeEntry)))).data;
  }

  async sshKeys(): Promise<LambdaSshKey[]> {
    return (await this.json('ssh-keys', 'GET', '/ssh-keys', data(z.array(SshKey)))).data;
  }

  async addSshKey(name: string, publicKey: string): Promise<LambdaSshKey> {
    return (await this.json('add-ssh-key', 'POST', '/ssh-keys', data(SshKey), { name, public_key: publicKey })).data;
  }

  async launch(body: LaunchBody): Promise<string[]> {
    return this.guard(
      async () =>
        data(z.object({ instance_ids: z.array(z.string()) })).parse(await this.http.call('launch', 'POST', '/instance-operations/launch', body)).data
          .instance_ids,
    );
  }

  /** Every instance of the account: the API has no name/tag filter and no pagination. */
  async instances(): Promise<LambdaInstance[]> {
    return (await this.json('list', 'GET', '/instances', data(z.array(Instance)))).data;
  }

  async terminate(ids: string[]): Promise<void> {
    return this.guard(async () => {
      data(z.object({ terminated_instances: z.array(Instance) })).parse(
        await this.http.call('terminate', 'POST', '/instance-operations/terminate', { instance_ids: ids }),
      );
    });
  }
}
