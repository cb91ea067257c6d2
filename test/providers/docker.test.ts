import { ownedName } from '../../src/providers/deployment';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError } from '../../src/core/errors';
import { renderShellScript } from '../../src/providers/cloud-init';
import { DockerProvider, fromEnv } from '../../src/providers/docker';
import { DockerApiError, classify, retryAfterMs } from '../../src/providers/docker/errors';
import { STATUS, toObserved } from '../../src/providers/docker/map';
import { runConformance, specFor } from './conformance';
import { FAULTS, type FaultName } from '../fixtures/docker/server';
import { startDockerDouble, type DockerDouble } from './docker/double';
import { planned, whyNothing } from './planned';

runConformance({
  name: 'docker',
  make: async () => {
    const d = await startDockerDouble();
    return {
      ...d,
      request: { vmName: 'cf', k8s: false },
      kinds: [
        { kind: 'Unavailable', primitive: 'create' },
        { kind: 'Credentials', primitive: 'plan' },
        { kind: 'Credentials', primitive: 'observe' },
        { kind: 'Transient', primitive: 'delete' },
        { kind: 'InvalidRequest', primitive: 'prepare' },
      ],
      nativeIdempotency: true,
      maxPolls: 3,
    };
  },
});

describe("docker: classification of the daemon's error bodies", () => {
  const table: [FaultName, string, string, string | undefined][] = [
    ['noImage', 'create', 'Unavailable', undefined],
    ['noImage', 'inspect', 'InvalidRequest', undefined],
    ['authz', 'list', 'Credentials', undefined],
    ['unauthorized', 'create', 'Credentials', undefined],
    ['portTaken', 'start', 'Transient', undefined],
    ['ociFailed', 'start', 'Failed', undefined],
    ['ociFailed', 'create', 'InvalidRequest', undefined],
    ['serverError', 'start', 'Failed', undefined],
    ['serverError', 'list', 'Transient', undefined],
    ['unavailable', 'info', 'Transient', undefined],
    ['rateLimited', 'list', 'Transient', undefined],
    ['badRequest', 'create', 'InvalidRequest', undefined],
  ];
  it.each(table)('%s at %s → %s', (fault, op, kind, block) => {
    const f = FAULTS[fault];
    const e = classify(new DockerApiError(op, f.status, f.body.message, 'headers' in f ? f.headers['retry-after'] : undefined), op);
    expect(e).toBeInstanceOf(ProviderError);
    expect(e.kind).toBe(kind);
    expect(e.block).toBe(block);
    expect(e.code).toBe(String(f.status));
  });

  it('socket failures: no daemon is Unavailable for the whole cloud, a denied socket is Credentials', () => {
    const enoent = Object.assign(new Error('connect ENOENT /nope.sock'), { code: 'ENOENT' });
    expect(classify(enoent)).toMatchObject({ kind: 'Unavailable', block: 'cloud' });
    expect(classify(new Error('fetch failed', { cause: Object.assign(new Error('x'), { code: 'EACCES' }) }))).toMatchObject({ kind: 'Credentials' });
    expect(classify(new Error('other side closed'))).toMatchObject({ kind: 'Transient' });
  });

  it('Retry-After in seconds or as a date', () => {
    expect(retryAfterMs('3')).toBe(3000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(retryAfterMs(undefined)).toBeUndefined();
  });
});

describe('docker: mapping', () => {
  it('status table and the loopback endpoint', () => {
    expect(Object.keys(STATUS).sort()).toEqual(['created', 'dead', 'exited', 'paused', 'removing', 'restarting', 'running']);
    const c = {
      Id: 'a',
      State: 'running',
      Ports: [
        { IP: '0.0.0.0', PrivatePort: 22, PublicPort: 49153, Type: 'tcp' },
        { IP: '127.0.0.1', PrivatePort: 6443, PublicPort: 49154, Type: 'tcp' },
      ],
    };
    expect(toObserved(c).endpoint).toEqual({ host: '127.0.0.1', port: 49153, user: 'root' });
    expect(toObserved({ ...c, State: 'exited', Status: 'Exited (1) 2 seconds ago' })).toMatchObject({ status: 'Failed', reason: 'Exited (1) 2 seconds ago' });
  });
});

describe('docker: vendor specifics against the socket double', () => {
  let d: DockerDouble;
  beforeAll(async () => {
    d = await startDockerDouble();
  });
  afterAll(async () => d.close());
  const at = { cloud: 'docker', region: 'local' };

  it('plans CPU sizes that fit the host; GPUs and other regions are unplannable', async () => {
    const offers = await planned(d.provider, { vmName: 'p', k8s: false });
    expect(offers.map((o) => o.instanceType)).toEqual(['cpu-1', 'cpu-2', 'cpu-4']);
    expect(await whyNothing(d.provider, { vmName: 'p', k8s: false, gpu: { model: 'T4', count: 1 } })).toBe('no T4 here; GPUs here: none (CPU types only)');
    expect(await whyNothing(d.provider, { vmName: 'p', k8s: false, regions: ['eu'] })).toBe('nothing in eu; regions here: local');
  });

  it('creates a labelled container with keys, the rendered boot script and loopback-only ports', async () => {
    const [, offer] = await planned(d.provider, { vmName: 'p', k8s: false });
    const spec = specFor('dk-spec', { openPorts: [22, 6443], bootScript: { script: 'touch /ok', env: { X: 'y' } } });
    const id = await d.provider.create(offer!, await d.provider.prepare(offer!, spec), spec);
    const c = d.server.containers().find((x) => x.Id === id)!;
    expect(c.Name).toBe(`/${ownedName('dk-spec', 'conformance')}`);
    expect(c.Labels).toEqual({ 'gpuprov-vm-name': 'dk-spec', 'gpuprov-owner': 'conformance' });
    expect(c.Env).toContain(`SSH_AUTHORIZED_KEYS=${spec.publicKeys[0]}`);
    const b64 = c.Env.find((e) => e.startsWith('GPUPROV_BOOT_SCRIPT_B64='))!.split('=')[1]!;
    expect(Buffer.from(b64, 'base64').toString('utf8')).toBe(renderShellScript(spec.bootScript!));
    expect(c.HostConfig.PortBindings).toEqual({ '22/tcp': [{ HostIp: '127.0.0.1', HostPort: '' }], '6443/tcp': [{ HostIp: '127.0.0.1', HostPort: '' }] });
    expect(c.HostConfig.NanoCpus).toBe(2e9);
    const [o] = await d.provider.observe(at, spec.vmName);
    expect(o).toMatchObject({
      id,
      status: 'Running',
      endpoint: { host: '127.0.0.1', port: c.Ports.find((p) => p.PrivatePort === 22)!.PublicPort, user: 'root' },
    });
    await d.provider.delete(at, spec.vmName, [id]);
    expect(d.server.containers().find((x) => x.Id === id)).toBeUndefined();
  });

  it('a start that fails leaves a Pending container that delete-by-identity removes', async () => {
    const [offer] = await planned(d.provider, { vmName: 'p', k8s: false });
    const spec = specFor('dk-start');
    const prepared = await d.provider.prepare(offer!, spec);
    d.server.arm('start', 'portTaken');
    await expect(d.provider.create(offer!, prepared, spec)).rejects.toMatchObject({ kind: 'Transient' });
    expect(await d.provider.observe(at, spec.vmName)).toMatchObject([{ status: 'Pending', reason: 'Created' }]);
    await d.provider.delete(at, spec.vmName, []);
    expect(await d.provider.observe(at, spec.vmName)).toEqual([]);
  });

  it('429 carries Retry-After when the daemon (or a proxy) sends it', async () => {
    d.server.arm('list', 'rateLimited');
    await expect(d.provider.observe(at, 'x')).rejects.toMatchObject({ kind: 'Transient', retryAfterMs: 3000 });
    d.server.arm('list', 'rateLimitedNoHeader');
    const e = (await d.provider.observe(at, 'x').catch((x: unknown) => x)) as ProviderError;
    expect(e.kind).toBe('Transient');
    expect(e.retryAfterMs).toBeUndefined();
  });

  it('a missing image fails prepare with the build command', async () => {
    const [offer] = await planned(d.provider, { vmName: 'p', k8s: false });
    const other = await startDockerDouble();
    other.server.removeImage();
    await expect(other.provider.prepare(offer!, specFor('dk-img'))).rejects.toThrow(/docker build -t gpuprov\/sshd:1 docker\/sshd/);
    await other.close();
  });

  it('no daemon behind the socket is Unavailable for the whole cloud', async () => {
    const p = new DockerProvider({ socketPath: '/tmp/gpuprov-no-such-dir/docker.sock', timeoutMs: 2_000 });
    await expect(planned(p, { vmName: 'p', k8s: false })).rejects.toMatchObject({ kind: 'Unavailable', block: 'cloud' });
  });

  it('fromEnv honours DOCKER_HOST', () => {
    expect(fromEnv({ DOCKER_HOST: `unix://${d.server.socketPath}` })?.name).toBe('docker');
    expect(fromEnv({ DOCKER_HOST: 'tcp://127.0.0.1:2375' })?.name).toBe('docker');
    expect(fromEnv({ DOCKER_HOST: 'ssh://me@host' })).toBeUndefined();
  });
});
