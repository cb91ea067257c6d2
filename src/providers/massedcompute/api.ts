import { z } from 'zod';
import { bearer } from '../http';
import { HttpApi } from '../http-api';
import { classify } from './errors';

export const DEFAULT_BASE_URL = 'https://vm.massedcompute.com/api/v1';

const num = z.union([z.number(), z.string()]).transform((v) => Number(v));

const Product = z
  .object({
    instance_type: z
      .object({
        name: z.string().optional(),
        description: z.string().nullish(),
        price_cents_per_hour: num,
        specs: z.object({ vcpu_count: num.optional(), memory_gib: num.optional(), storage_gb: num.optional() }).loose().nullish(),
      })
      .loose(),
    regions_with_capacity_available: z.array(z.object({ name: z.string() }).loose()).default([]),
    capacity_available: z.union([z.number(), z.boolean()]).nullish(),
  })
  .loose();
export type MassedProduct = z.infer<typeof Product>;
const Inventory = z.object({ gpu_inventory: z.record(z.string(), Product) }).loose();

const Image = z.object({ vm_image_id: num, vm_image_name: z.string() }).loose();
const Key = z.object({ id: z.union([z.number(), z.string()]), name: z.string(), public_key: z.string().optional() }).loose();

const Instance = z
  .object({
    uuid: z.string(),
    name: z.string().nullish(),
    ip: z.string().nullish(),
    username: z.string().nullish(),
    status: z.string().nullish(),
    os_booted: z.union([z.number(), z.boolean()]).nullish(),
    active: z.union([z.number(), z.boolean()]).nullish(),
    product: z.object({ name: z.string().optional() }).loose().nullish(),
  })
  .loose();
export type MassedInstance = z.infer<typeof Instance>;

export interface LaunchBody {
  imageId: number;
  productName: string;
  regionName: 'any';
  instanceName: string;
  sshKeys: string[];
  command?: string;
}

/** The only code that talks HTTP to Massed Compute. Every response is zod-parsed; the token travels only in the Authorization header. */
export class MassedApi extends HttpApi {
  constructor(token: string, baseUrl: string = DEFAULT_BASE_URL) {
    super({ baseUrl, auth: bearer(token) }, classify);
  }

  async inventory(): Promise<Record<string, MassedProduct>> {
    return (await this.json('get gpu inventory', 'GET', '/gpu-inventory', Inventory)).gpu_inventory;
  }
  async images(): Promise<{ vm_image_id: number; vm_image_name: string }[]> {
    return (await this.json('list images', 'GET', '/images', z.object({ images: z.array(Image) }).loose())).images;
  }
  async sshKeys(): Promise<z.infer<typeof Key>[]> {
    return (await this.json('list ssh keys', 'GET', '/ssh-keys', z.object({ sshKeys: z.array(Key) }).loose())).sshKeys;
  }
  async addSshKey(name: string, publicKey: string): Promise<void> {
    return this.guard(async () => {
      z.object({ sshKey: z.object({ name: z.string() }).loose() })
        .loose()
        .parse(await this.http.call('add ssh key', 'POST', '/ssh-keys', { name, publicKey }));
    });
  }
  /** 202 `{response: "<uuid>"}`. */
  async launch(body: LaunchBody): Promise<string> {
    return (await this.json('launch instance', 'POST', '/instance/launch', z.object({ response: z.string().min(1) }).loose(), body)).response;
  }
  async instances(): Promise<MassedInstance[]> {
    return (await this.json('list instances', 'GET', '/instance', z.object({ runningInstances: z.array(Instance).default([]) }).loose())).runningInstances;
  }
  /** False when the instance is already gone (404). */
  async terminate(uuid: string): Promise<boolean> {
    return this.unlessGone('terminate instance', 'POST', '/instance/terminate', { instanceUuids: [uuid] });
  }
}
