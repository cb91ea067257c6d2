import { homedir, userInfo } from 'node:os';
import { join } from 'node:path';
import { ProviderError } from '../../core/errors';
import type { InstanceSpec, Json, Location, Observed, Offer, Owned, ResourceRequest } from '../../core/provider';
import { LocalApi, type SshdMode } from './api';
import { injected } from './errors';
import { Faults, where, type FaultCall } from './faults';
import { localInventory } from './inventory';
import { CLOUD, isKnownOffer, listOffers, toObserved } from './map';
import type { DeploymentOption } from '../deployment';
import { CloudAdapter } from '../cloud-adapter';

export { countLive, liveSshdPids } from './procs';

export interface LocalProviderOptions extends DeploymentOption {
  /** Directory holding every instance's state; processes sharing it share the cloud. */
  root: string;
  /** JSON fault file, re-read on every call (see `faults.ts` for its rules). */
  faultsFile?: string;
  /** OpenSSH's sshd binary (default: /usr/sbin/sshd, else `sshd` on PATH). */
  sshdPath?: string;
  /** The instances' SSH server: OpenSSH's sshd, gpuprov's built-in one, or `auto` (default: OpenSSH when found). */
  sshd?: SshdMode;
  /** The deployment whose instances `inventory` lists (their `owner` label); default `default`, the default namespace. */
  deployment?: string;
}

/**
 * The test cloud that needs no account: every instance is a real SSH server on 127.0.0.1 and a
 * free port (OpenSSH's `sshd`, or gpuprov's built-in one where that is missing), with its state
 * directory under `root`. Regions `local-a` and
 * `local-b`; types `cpu-small`, `cpu-large` and the fake-GPU `gpu-sim-1`. A fault file can
 * inject errors, ambiguous creates, slow boots and failing deletes. Every instance records its
 * deployment (`owner` label): another deployment's instances are invisible and never removed.
 */
export class LocalProvider extends CloudAdapter {
  private readonly api: LocalApi;
  private readonly faults: Faults;
  private readonly user: string;

  constructor(opts: LocalProviderOptions) {
    super(CLOUD, opts, { bootScript: false, openPorts: false, sshUser: { kind: 'provider' }, bootTimeoutMs: 60_000, pollIntervalMs: 250, typicalBootMs: 500 });
    this.api = new LocalApi(opts.root, opts.sshd, opts.sshdPath);
    this.faults = new Faults(opts.faultsFile, join(this.api.root, 'faults-state'));
    this.user = userInfo().username;
  }

  /** Absolute state root (tests count leaks under it). */
  get root(): string {
    return this.api.root;
  }

  async plan(_req: ResourceRequest): Promise<Offer[]> {
    return this.guard({ primitive: 'plan' }, async () => listOffers());
  }

  async prepare(offer: Offer, spec: InstanceSpec): Promise<Json> {
    return this.guard(callOf('prepare', offer), async () => {
      checkOffer(offer, spec);
      await this.api.ensureBinaries();
      await this.api.ensureVmDir(offer.region, spec.vmName, this.deployment);
      return { stateDir: this.api.vmDir(offer.region, spec.vmName, this.deployment) };
    });
  }

  async create(offer: Offer, _prepared: Json, spec: InstanceSpec): Promise<string> {
    const call = callOf('create', offer);
    return this.guard(call, async () => {
      checkOffer(offer, spec);
      await this.api.ensureBinaries();
      const faults = this.faults.forCreate(call);
      const id = await this.api.create(offer, { ...spec, owner: this.deployment }, faults.bootDelayMs);
      if (faults.ambiguous !== undefined) throw injected(faults.ambiguous, `${where(call)} after creating ${id}`);
      return id;
    });
  }

  async observe(at: Location, vmName: string): Promise<Observed[]> {
    return this.guard({ primitive: 'observe', region: at.region }, async () => {
      const mine = (await this.api.list()).filter((x) => this.isMine(x.labels, vmName, at));
      const records = await Promise.all(mine.map((x) => this.api.record(x.id, x.labels)));
      return records.map((r) => toObserved(r, this.user));
    });
  }

  async delete(at: Location, vmName: string, ids: string[], exact = false): Promise<void> {
    return this.guard({ primitive: 'delete', region: at.region }, async () => {
      await this.api.sweepTrash();
      const byIdentity = exact ? [] : (await this.api.list()).filter((x) => this.isMine(x.labels, vmName, at)).map((x) => x.id);
      const given: string[] = [];
      for (const id of ids) {
        const labels = await this.api.labels(id);
        // An id of another region or another deployment is not ours to remove: leave it alone.
        if (labels === undefined || (labels.region === at.region && labels.owner === this.deployment)) given.push(id);
      }
      for (const id of new Set([...given, ...byIdentity])) await this.api.remove(id);
    });
  }

  override async cleanup(at: Location, vmName: string): Promise<void> {
    return this.guard({ primitive: 'cleanup', region: at.region }, async () => {
      await this.api.removeVmDir(at.region, vmName, this.deployment);
    });
  }

  private isMine(labels: { vmName: string; owner: string; region: string }, vmName: string, at: Location): boolean {
    return labels.vmName === vmName && labels.region === at.region && labels.owner === this.deployment;
  }

  async inventory(at: Location): Promise<Owned[]> {
    return this.guard({ primitive: 'observe', region: at.region }, () => localInventory(this.api, at, this.deployment, this.user));
  }

  /** Injected faults first, then the work (LocalApi classifies its own errors). */
  private async guard<T>(call: FaultCall, work: () => Promise<T>): Promise<T> {
    this.faults.check(call);
    return work();
  }
}

function callOf(primitive: 'prepare' | 'create', offer: Offer): FaultCall {
  return { primitive, region: offer.region, instanceType: offer.instanceType };
}

function checkOffer(offer: Offer, spec: InstanceSpec): void {
  if (!isKnownOffer(offer)) throw new ProviderError('InvalidRequest', `local: unknown offer ${offer.cloud}/${offer.region}/${offer.instanceType}`);
  if (spec.vmName.trim() === '') throw new ProviderError('InvalidRequest', 'local: empty VM name');
}

/**
 * The local cloud needs no credentials, so this always returns a provider: rooted at
 * `GPUPROV_LOCAL_ROOT` (default `~/.local/state/gpuprov/local-cloud`), faults from
 * `GPUPROV_LOCAL_FAULTS`, SSH server from `GPUPROV_LOCAL_SSHD` (`openssh` | `builtin`; an
 * unknown value fails the first prepare/create as InvalidRequest).
 */
export function fromEnv(env: NodeJS.ProcessEnv, opts: DeploymentOption = {}): LocalProvider {
  const root = env.GPUPROV_LOCAL_ROOT || join(env.HOME || homedir(), '.local', 'state', 'gpuprov', 'local-cloud');
  const faultsFile = env.GPUPROV_LOCAL_FAULTS || undefined;
  const sshd = (env.GPUPROV_LOCAL_SSHD || 'auto') as SshdMode;
  return new LocalProvider(faultsFile === undefined ? { ...opts, root, sshd } : { ...opts, root, faultsFile, sshd });
}
