/**
 * What every cloud adapter does the same way, written once: its name and deployment, the
 * capabilities (the cloud table's part, src/core/clouds.ts, plus the adapter's own), a `cleanup`
 * with nothing per VM, and `fromEnv` from one credential variable.
 */
import { tableCapabilities, type CloudName } from '../core/clouds';
import { ProviderError } from '../core/errors';
import type { Capabilities, CloudProvider, InstanceSpec, Json, Location, Observed, Offer, Owned, ResourceRequest } from '../core/provider';
import { deploymentOf, type DeploymentOption } from './deployment';

/** The capabilities an adapter states itself; `k8s`, `image`, `diskGb` and `markets` come from its row of the cloud table. */
export type OwnCapabilities = Omit<Capabilities, 'k8s' | 'image' | 'diskGb' | 'markets'>;

/** Boot bounds most VM clouds share: up to 20 minutes, observed every 10 s. */
export const VM_BOOT = { bootTimeoutMs: 20 * 60_000, pollIntervalMs: 10_000 } as const;

/** The base of every adapter: subclasses write the vendor calls. */
export abstract class CloudAdapter implements CloudProvider {
  /** The owning deployment: written on everything the adapter makes, and the only one it sees. */
  readonly deployment: string;

  protected constructor(
    readonly name: CloudName,
    opts: DeploymentOption | undefined,
    private readonly own: OwnCapabilities,
  ) {
    this.deployment = deploymentOf(opts);
  }

  capabilities(): Capabilities {
    return { ...this.own, ...tableCapabilities(this.name) };
  }

  abstract plan(req: ResourceRequest): Promise<Offer[]>;
  abstract prepare(offer: Offer, spec: InstanceSpec): Promise<Json>;
  abstract create(offer: Offer, prepared: Json, spec: InstanceSpec): Promise<string>;
  abstract observe(at: Location, vmName: string): Promise<Observed[]>;
  abstract delete(at: Location, vmName: string, ids: string[]): Promise<void>;
  abstract inventory(at: Location): Promise<Owned[]>;

  /** Nothing per VM unless the adapter says otherwise: keys are hash-named and shared by every VM of the worker. */
  async cleanup(_at: Location, _vmName: string): Promise<void> {}
}

/** A required credential, or `Credentials` naming the variable that holds it. */
export function required(value: string | undefined, message: string): string {
  if (!value) throw new ProviderError('Credentials', message);
  return value;
}

/** The options of an adapter built from one API key variable and an optional base-URL variable. */
export interface KeyAndUrl extends DeploymentOption {
  apiKey: string;
  baseUrl?: string;
}

/** `make` with the key in `keyVar` (and the URL in `urlVar` when set), or undefined when the key is not set. */
export function fromKeyEnv<T>(env: NodeJS.ProcessEnv, opts: DeploymentOption, keyVar: string, urlVar: string, make: (o: KeyAndUrl) => T): T | undefined {
  const apiKey = env[keyVar];
  if (!apiKey) return undefined;
  const baseUrl = env[urlVar];
  return make({ ...opts, apiKey, ...(baseUrl ? { baseUrl } : {}) });
}
