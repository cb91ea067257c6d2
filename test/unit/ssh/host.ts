/**
 * One real OpenSSH sshd on 127.0.0.1 for the SSH unit tests, started by the local cloud's own
 * code: the worker's identity is authorised, another identity is not, and a port nothing listens on.
 */
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { loadOrCreateSshIdentity, sshProber, type SshIdentity, type SshTarget } from '../../../src/ssh';
import type { InstanceSpec, Location } from '../../../src/core/provider';
import { makeCloud, waitFor, type LocalCloud } from '../../providers/local/helpers';

export { describeWithSshd } from '../../providers/local/helpers';

export interface TestHost {
  cloud: LocalCloud;
  at: Location;
  /** The VM's name at the local cloud. */
  vmName: string;
  /** Authorised on the host. */
  identity: SshIdentity;
  /** Not authorised anywhere. */
  stranger: SshIdentity;
  /** Login target, without a pinned key. */
  target: SshTarget;
  /** `<type> <base64>` the host presents. */
  hostKey: string;
  /** A well-formed key that is not the host's. */
  otherHostKey: string;
  /** A 127.0.0.1 port that refuses connections. */
  refusedPort: number;
  close(): Promise<void>;
}

async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

export async function startTestHost(prefix: string): Promise<TestHost> {
  const cloud = await makeCloud(prefix);
  const identity = await loadOrCreateSshIdentity(join(cloud.root, 'keys'));
  const stranger = await loadOrCreateSshIdentity(join(cloud.root, 'stranger'));
  const offer = (await cloud.provider.plan({ vmName: prefix, k8s: false }))[0]!;
  const at: Location = { cloud: offer.cloud, region: offer.region };
  const spec: InstanceSpec = { vmName: prefix, owner: 'ssh-unit', publicKeys: [identity.publicKey], idempotencyKey: `${prefix}-0`, openPorts: [22] };
  await cloud.provider.create(offer, await cloud.provider.prepare(offer, spec), spec);
  const seen = await waitFor(
    () => cloud.provider.observe(at, prefix),
    (o) => o.some((x) => x.status === 'Running' && x.endpoint !== undefined),
    30_000,
  );
  const ep = seen.find((o) => o.status === 'Running')?.endpoint;
  if (!ep?.user) throw new Error(`the local sshd did not come up: ${JSON.stringify(seen)}`);
  const target: SshTarget = { host: ep.host, port: ep.port, user: ep.user };
  // sshd may accept TCP a moment before it answers: a few tries, bounded.
  let probe: Awaited<ReturnType<typeof sshProber>> | undefined;
  for (let i = 0; i < 50 && !probe; i++)
    probe = await sshProber(target, identity, 10_000).catch(() => new Promise<undefined>((r) => setTimeout(() => r(undefined), 100)));
  if (!probe) throw new Error('the local sshd never accepted the worker key');
  return {
    cloud,
    at,
    vmName: prefix,
    identity,
    stranger,
    target,
    hostKey: probe.hostKey,
    otherHostKey: stranger.publicKey.split(' ').slice(0, 2).join(' '),
    refusedPort: await closedPort(),
    close: async () => {
      await cloud.provider.delete(at, prefix, []).catch(() => undefined);
      await cloud.close();
    },
  };
}
