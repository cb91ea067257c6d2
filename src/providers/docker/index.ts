import { existsSync } from 'node:fs';
import { z } from 'zod';
import { ProviderError } from '../../core/errors';
import { renderShellScript } from '../cloud-init';
import {
  IDENTITY_TAG,
  OWNER_TAG,
  type CloudProvider,
  type InstanceSpec,
  type Json,
  type Location,
  type Observed,
  type Owned,
  type Offer,
  type ResourceRequest,
} from '../../core/provider';
import { DockerApi, type CreateBody } from './api';
import { CLOUD, DEFAULT_IMAGE, REGION, SSH_USER, containerName, hasIdentity, isForeign, offersFor, sizeOf, toObserved } from './map';
import type { DeploymentOption } from '../deployment';
import { CloudAdapter } from '../cloud-adapter';

export interface DockerOptions extends DeploymentOption {
  /** Daemon unix socket (from `DOCKER_HOST=unix:///…`; default `/var/run/docker.sock`). */
  socketPath?: string;
  /** `http://host:port` (from `DOCKER_HOST=tcp://host:port`). */
  baseUrl?: string;
  /** Image to run (`GPUPROV_DOCKER_IMAGE`). */
  image?: string;
  timeoutMs?: number;
}

const Prepared = z.object({ image: z.string() });

/**
 * Containers on the local Docker daemon posing as small VMs: an sshd image, one published
 * loopback port for 22. No credentials, no GPUs, no k3s.
 */
class DockerProvider extends CloudAdapter {
  private readonly api: DockerApi;
  private readonly image: string;

  constructor(opts: DockerOptions = {}) {
    super(CLOUD, opts, {
      bootScript: true,
      openPorts: true,
      sshUser: { kind: 'fixed', user: SSH_USER },
      bootTimeoutMs: 2 * 60_000,
      pollIntervalMs: 1_000,
      typicalBootMs: 2_000,
    });
    this.api = new DockerApi({
      ...(opts.socketPath ? { socketPath: opts.socketPath } : {}),
      ...(opts.baseUrl ? { baseUrl: opts.baseUrl } : {}),
      ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}),
    });
    this.image = opts.image ?? DEFAULT_IMAGE;
  }

  /** CPU containers only, in the one region `local`; a GPU ask matches none of them. */
  async plan(_req: ResourceRequest): Promise<Offer[]> {
    const offers = offersFor(await this.api.info());
    if (offers.length === 0) throw new ProviderError('InvalidRequest', 'docker: no container size fits the request on this host');
    return offers;
  }

  /** `--image` must be on the daemon and, like the default, run sshd with SSH_AUTHORIZED_KEYS (e.g. built FROM gpuprov/sshd:1). */
  async prepare(_offer: Offer, spec: InstanceSpec): Promise<Json> {
    const ref = spec.image ?? this.image;
    const id = await this.api.imageId(ref);
    if (!id)
      throw new ProviderError(
        'InvalidRequest',
        spec.image === undefined
          ? `docker: image ${ref} is missing; build it: docker build -t ${ref} docker/sshd`
          : `docker: image ${ref} is missing on the daemon; pull or build it first`,
        { code: 'ImageMissing' },
      );
    // Pin the exact image for this VM so a rebuilt tag does not change a retried create.
    return { image: id };
  }

  async create(offer: Offer, prepared: Json, spec: InstanceSpec): Promise<string> {
    const p = Prepared.safeParse(prepared);
    if (!p.success) throw new ProviderError('InvalidRequest', 'docker: prepared data is not from this adapter');
    const size = sizeOf(offer.instanceType);
    if (!size) throw new ProviderError('InvalidRequest', `docker: unknown instance type ${offer.instanceType}`);
    const ports = [...new Set([22, ...spec.openPorts])];
    const env = [`SSH_AUTHORIZED_KEYS=${spec.publicKeys.join('\n')}`];
    if (spec.bootScript) env.push(`GPUPROV_BOOT_SCRIPT_B64=${Buffer.from(renderShellScript(spec.bootScript), 'utf8').toString('base64')}`);
    const name = containerName(spec.vmName, this.deployment);
    const body: CreateBody = {
      Image: p.data.image,
      Hostname: name.slice(0, 63),
      Labels: { [IDENTITY_TAG]: spec.vmName, [OWNER_TAG]: this.deployment },
      Env: env,
      ExposedPorts: Object.fromEntries(ports.map((n) => [`${n}/tcp`, {}])),
      HostConfig: {
        // Loopback only, host port chosen by the daemon.
        PortBindings: Object.fromEntries(ports.map((n) => [`${n}/tcp`, [{ HostIp: '127.0.0.1', HostPort: '' }]])),
        NanoCpus: size.vcpus * 1e9,
        Memory: size.memoryGiB * 2 ** 30,
        RestartPolicy: { Name: 'no' },
        Init: true,
      },
    };
    const res = await this.api.createContainer(name, body);
    // The container name is unique per daemon: a clash is this VM's container from an earlier try.
    const id = 'id' in res ? res.id : (await this.api.inspect(name))?.Id;
    if (!id) throw new ProviderError('Transient', `docker: container name ${name} is taken but the container is gone`);
    // A start that fails leaves a created container: observe reports it Pending, delete finds it by label.
    await this.api.startContainer(id);
    return id;
  }

  /** A container left `created` (the worker died between create and start) is started now; any other state is left alone. */
  async resumeCreate(at: Location, vmName: string, id: string): Promise<void> {
    if (at.region !== REGION) return;
    const c = await this.api.inspect(id);
    if (c?.State?.Status !== 'created' || !hasIdentity({ Id: c.Id, State: c.State.Status, Labels: c.Config?.Labels ?? null }, vmName, this.deployment)) return;
    await this.api.startContainer(c.Id);
  }

  async observe(at: Location, vmName: string): Promise<Observed[]> {
    if (at.region !== REGION) return [];
    const list = await this.api.listByLabel(IDENTITY_TAG, vmName);
    return list.filter((c) => hasIdentity(c, vmName, this.deployment)).map(toObserved);
  }

  async inventory(at: Location): Promise<Owned[]> {
    if (at.region !== REGION) return [];
    return (await this.api.listByLabel(OWNER_TAG, this.deployment)).flatMap((c) => {
      const vmName = c.Labels?.[IDENTITY_TAG];
      return vmName !== undefined && hasIdentity(c, vmName, this.deployment) ? [{ ...toObserved(c), vmName }] : [];
    });
  }

  async delete(at: Location, vmName: string, ids: string[]): Promise<void> {
    const found = at.region === REGION ? await this.api.listByLabel(IDENTITY_TAG, vmName) : [];
    const foreign = new Set(found.filter((c) => isForeign(c, this.deployment)).map((c) => c.Id));
    const mine = found.filter((c) => hasIdentity(c, vmName, this.deployment) && c.State !== 'removing').map((c) => c.Id);
    const targets = new Set([...ids.filter((id) => !foreign.has(id)), ...mine]);
    for (const id of targets) await this.api.remove(id);
  }
}

/**
 * The Docker adapter when a daemon is configured: `DOCKER_HOST=unix:///…` or `tcp://…`, else the
 * default socket if it exists; `undefined` otherwise (there are no credentials to check).
 */
export function fromEnv(env: NodeJS.ProcessEnv, opts: DeploymentOption = {}): CloudProvider | undefined {
  const image = { ...opts, ...(env.GPUPROV_DOCKER_IMAGE ? { image: env.GPUPROV_DOCKER_IMAGE } : {}) };
  const host = env.DOCKER_HOST;
  if (host?.startsWith('unix://')) return new DockerProvider({ socketPath: host.slice('unix://'.length), ...image });
  if (host?.startsWith('tcp://')) return new DockerProvider({ baseUrl: `http://${host.slice('tcp://'.length)}`, ...image });
  if (host) return undefined;
  return existsSync('/var/run/docker.sock') ? new DockerProvider({ socketPath: '/var/run/docker.sock', ...image }) : undefined;
}

export { DockerProvider };
