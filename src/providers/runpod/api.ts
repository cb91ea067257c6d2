/**
 * RunPod REST v2 (`https://api.runpod.io/v2`): the only file that talks HTTP for this cloud.
 * Every response is zod-parsed; the API key goes only into the Authorization header, never a log.
 */
import { z } from 'zod';
import { bearer } from '../http';
import { HttpApi } from '../http-api';
import { classify } from './errors';

export const DEFAULT_RUNPOD_URL = 'https://api.runpod.io/v2';

const Gpu = z.object({
  id: z.string(),
  name: z.string().nullish(),
  memory: z.number().nullish(),
  secure: z.boolean().nullish(),
  community: z.boolean().nullish(),
  price: z.object({ secure: z.number().nullish(), community: z.number().nullish() }).nullish(),
  availability: z.string().nullish(),
  dataCenters: z.array(z.object({ id: z.string(), name: z.string().nullish(), availability: z.string().nullish() })).nullish(),
});
export type RunPodGpu = z.infer<typeof Gpu>;

const SshAccess = z.object({ host: z.string(), port: z.number(), username: z.string().nullish(), command: z.string().nullish() });
const Pod = z.object({
  id: z.string(),
  name: z.string().nullish(),
  status: z.string().nullish(),
  // v1 shape, still tolerated: desiredStatus / publicIp / portMappings.
  desiredStatus: z.string().nullish(),
  dataCenterId: z.string().nullish(),
  gpu: z.object({ id: z.string().nullish(), count: z.number().nullish() }).nullish(),
  cost: z.number().nullish(),
  ssh: z.object({ proxy: SshAccess.nullish(), direct: SshAccess.nullish() }).nullish(),
  runtime: z
    .object({
      ports: z
        .array(
          z.object({
            private: z.number().nullish(),
            public: z.number().nullish(),
            type: z.string().nullish(),
            ip: z.string().nullish(),
            isIpPublic: z.boolean().nullish(),
          }),
        )
        .nullish(),
    })
    .nullish(),
  publicIp: z.string().nullish(),
  portMappings: z.record(z.string(), z.number()).nullish(),
});
export type RunPodPod = z.infer<typeof Pod>;

/** Account keys: OpenSSH lines; objects tolerated in case the API wraps them. */
const AccountKey = z.union([
  z.string(),
  z.object({ publicKey: z.string() }).transform((k) => k.publicKey),
  z.object({ key: z.string() }).transform((k) => k.key),
]);

export interface CreatePodBody {
  name: string;
  image: string;
  gpu: { id: string; count: number };
  cloud: 'SECURE' | 'COMMUNITY';
  dataCenterIds: string[];
  ports: string[];
  startSsh: boolean;
  env: Record<string, string>;
  disk: number;
}

export class RunPodApi extends HttpApi {
  constructor(opts: { apiKey: string; baseUrl: string }) {
    super({ baseUrl: opts.baseUrl, auth: bearer(opts.apiKey) }, classify);
  }

  async gpus(count: number): Promise<RunPodGpu[]> {
    return this.guard(async () => {
      const q = new URLSearchParams({ include: 'AVAILABILITY', product: 'POD', count: String(count), cloud: 'SECURE' });
      return z.object({ gpus: z.array(Gpu) }).parse(await this.http.call('catalog', 'GET', `/catalog/gpus?${q.toString()}`)).gpus;
    });
  }

  async accountKeys(): Promise<string[]> {
    return this.guard(
      async () => z.object({ keys: z.array(AccountKey).nullish() }).parse(await this.http.call('ssh-keys', 'GET', '/account/ssh-keys')).keys ?? [],
    );
  }

  /** Replaces the WHOLE account key set: callers pass the merged list. */
  async putAccountKeys(keys: string[]): Promise<void> {
    return this.guard(async () => {
      await this.http.call('ssh-keys', 'PUT', '/account/ssh-keys', { keys });
    });
  }

  async createPod(body: CreatePodBody): Promise<RunPodPod> {
    return this.json('create', 'POST', '/pods', Pod, body);
  }

  /** All pods: no name filter, no pagination. */
  async pods(): Promise<RunPodPod[]> {
    return this.guard(async () => {
      const raw = await this.http.call('list', 'GET', '/pods');
      return z.union([z.array(Pod), z.object({ pods: z.array(Pod) }).transform((r) => r.pods)]).parse(raw);
    });
  }

  /** False when the pod is already gone (404). */
  async deletePod(id: string): Promise<boolean> {
    return this.unlessGone('delete', 'DELETE', `/pods/${encodeURIComponent(id)}`);
  }
}
