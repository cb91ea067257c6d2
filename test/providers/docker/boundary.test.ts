/**
 * The Docker adapter's Engine API version negotiation and its create/start boundary, against the
 * socket double (the real engine: test/e2e/docker-engine.test.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { nextAfterFailure } from '../../../src/client/commands/start';
import { createOrAdopt } from '../../../src/activities/create-or-adopt';
import { noOffersKind } from '../../../src/core/offer-match';
import { DockerProvider } from '../../../src/providers/docker';
import { negotiateApiVersion } from '../../../src/providers/docker/api-version';
import { startDockerServer, type DockerServer, type DockerServerOptions } from '../../fixtures/docker/server';
import { specFor } from '../conformance';

const at = { cloud: 'docker', region: 'local' };
let server: DockerServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
async function engine(opts: DockerServerOptions = {}): Promise<{ server: DockerServer; provider: DockerProvider }> {
  server = await startDockerServer(opts);
  return { server, provider: new DockerProvider({ socketPath: server.socketPath, timeoutMs: 5_000, deployment: 'conformance' }) };
}

describe('docker: Engine API version', () => {
  it('min(the engine’s, 1.43), refused below 1.41', () => {
    expect(['1.40', '1.41', '1.42', '1.43', '1.47', '2.0', 'x'].map(negotiateApiVersion)).toEqual([
      undefined,
      '1.41',
      '1.42',
      '1.43',
      '1.43',
      '1.43',
      undefined,
    ]);
  });

  it('asks /version once, unversioned, then speaks the negotiated version (an API 1.41 engine: Docker 20.10)', async () => {
    const { server, provider } = await engine({ apiVersion: '1.41', routesVersion: '1.41' });
    await provider.plan({ vmName: 'v', k8s: false });
    await provider.observe(at, 'v');
    expect(server.http.log.map((r) => r.path.split('?')[0])).toEqual(['/version', '/v1.41/info', '/v1.41/containers/json']);
  });

  it('an engine below 1.41 is refused for the whole cloud, naming the engine and the fix', async () => {
    const { server, provider } = await engine({ apiVersion: '1.40' });
    const e = await provider.plan({ vmName: 'v', k8s: false }).catch((x: unknown) => x);
    expect(e).toMatchObject({ kind: 'Unavailable', block: 'cloud', code: 'EngineTooOld' });
    expect((e as Error).message).toBe(
      `docker: the engine at unix://${server.socketPath} speaks API 1.40 (Docker 27.3.1); gpuprov needs API 1.41 or newer (Docker 20.10+): upgrade the engine, or point DOCKER_HOST at a newer one`,
    );
  });

  it('a refused engine is a configuration problem: the plan says Unavailable and start does not advise widening the search', () => {
    expect(noOffersKind([{ kind: 'Unavailable' }])).toBe('Unavailable');
    expect(noOffersKind([{ kind: 'Unavailable' }, { kind: 'Credentials' }])).toBe('Unavailable');
    expect(noOffersKind([{ kind: 'Credentials' }])).toBe('Credentials');
    expect(noOffersKind([{ kind: 'Unavailable' }, { kind: 'InvalidRequest' }])).toBe('InvalidRequest');
    expect(nextAfterFailure('no-offers', 'Unavailable', 'g')).not.toContain('widen the search');
    expect(nextAfterFailure('no-offers', 'InvalidRequest', 'g')).toContain('widen the search');
    expect(nextAfterFailure('exhausted', 'Unavailable', 'g')).toContain('widen the search');
  });
});

describe('docker: a create cut between the container’s create and its start', () => {
  it('the retry adopts the created container and starts it', async () => {
    const { server, provider } = await engine();
    const [offer] = await provider.plan({ vmName: 'b', k8s: false });
    const spec = specFor('dk-boundary');
    const prepared = await provider.prepare(offer!, spec);
    server.arm('start', 'portTaken');
    await expect(provider.create(offer!, prepared, spec)).rejects.toMatchObject({ kind: 'Transient' });
    expect(await provider.observe(at, spec.vmName)).toMatchObject([{ status: 'Pending' }]);

    const again = await createOrAdopt(provider, offer!, prepared, spec);
    expect(again.adopted).toBe(true);
    expect(await provider.observe(at, spec.vmName)).toMatchObject([{ id: again.instanceId, status: 'Running' }]);
    expect(server.liveCount()).toBe(1);
  });

  it('a start the runtime refuses fails the retry at once as Failed (not a 2-minute wait for Running)', async () => {
    const { server, provider } = await engine();
    const [offer] = await provider.plan({ vmName: 'b', k8s: false });
    const spec = specFor('dk-refused');
    const prepared = await provider.prepare(offer!, spec);
    server.arm('start', 'ociFailed');
    await expect(provider.create(offer!, prepared, spec)).rejects.toMatchObject({ kind: 'Failed', code: '400' });
    server.arm('start', 'ociFailed');
    await expect(createOrAdopt(provider, offer!, prepared, spec)).rejects.toMatchObject({ kind: 'Failed' });
  });

  it('resumeCreate leaves a running container and other deployments’ containers alone', async () => {
    const { server, provider } = await engine();
    const [offer] = await provider.plan({ vmName: 'b', k8s: false });
    const spec = specFor('dk-alone');
    const id = await provider.create(offer!, await provider.prepare(offer!, spec), spec);
    const before = server.http.log.length;
    await provider.resumeCreate(at, spec.vmName, id);
    expect(server.http.log.slice(before).map((r) => r.method)).toEqual(['GET']);
    const other = new DockerProvider({ socketPath: server.socketPath, deployment: 'someone-else' });
    server.arm('start', 'portTaken');
    const spec2 = specFor('dk-theirs');
    await expect(provider.create(offer!, await provider.prepare(offer!, spec2), spec2)).rejects.toMatchObject({ kind: 'Transient' });
    const [theirs] = await provider.observe(at, spec2.vmName);
    await other.resumeCreate(at, spec2.vmName, theirs!.id);
    expect(await provider.observe(at, spec2.vmName)).toMatchObject([{ status: 'Pending' }]);
  });
});
