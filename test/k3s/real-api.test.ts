/**
 * The k3s step's cluster checks against a REAL kube-apiserver + etcd with real TLS. The hosts are
 * the simulated k3s hosts of k3s.test.ts (real sshd, the real installer, simulated systemctl /
 * cloud-init / nvidia-smi), but the k3s they install is sim/k3s-real.mjs: the real API server on
 * config.yaml's port and SANs, with the node and CoreDNS made through the API (no kubelet runs).
 * What is judged by the real server: AwaitApi's /readyz, Validate's serving-certificate SAN check
 * (Direct and through the SSH tunnel), node Ready, CoreDNS available, `nvidia.com/gpu` allocatable,
 * and `provision kubeconfig` / `provision tunnel` with the server's own certificates.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../src/activities';
import { loadOrCreateSshIdentity, type SshKeyFile } from '../../src/ssh';
import { kubeconfigCommand } from '../../src/client/commands/kubeconfig';
import type { Io } from '../../src/client/command';
import type { K3sStatus } from '../../src/core/k3s-access';
import { ProviderRegistry } from '../../src/providers/registry';
import type { GpuRequest } from '../../src/core/provider';
import type { vmWorkflow } from '../../src/workflows';
import { teardownSignal, vmWorkflowId, type VmStatus } from '../../src/core/api';
import type { K3sTuning } from '../../src/core/tuning';
import { requireServer, requireTool, startTestWorker, testEnv, type TestWorker } from '../harness/temporal';
import { FAST, waitFor } from '../workflows/helpers';
import { apiGet, kubeconfigPathOf, withTunnel } from './sim/api-client';
import { etcdPath, haveRealApi, KUBE_APISERVER_VERSION, kubeApiserverPath, startEtcd, type Etcd } from './sim/real-api';
import { freePort, SimulatedK3sCloud, type SimHost } from './sim/simulated-cloud';

const haveTools = existsSync('/usr/sbin/sshd') && existsSync('/usr/bin/openssl') && existsSync('/usr/bin/flock');
/** A real API server takes seconds to answer /readyz on a loaded machine: the deadlines are wide. */
const K3S_REAL: K3sTuning = {
  k3sBootMaxWaitMs: 30_000,
  k3sProbeIntervalMs: 500,
  k3sInstallTimeoutMs: 60_000,
  k3sApiDeadlineMs: 240_000,
  k3sValidateDeadlineMs: 60_000,
};
const SETTLE_MS = 300_000;

describe.skipIf(
  !requireServer() ||
    !requireTool('sshd, openssl, flock', haveTools, 'apt-get install -y openssh-server openssl util-linux') ||
    !requireTool(
      `kube-apiserver (${kubeApiserverPath()}) and etcd (${etcdPath()})`,
      haveRealApi(),
      'bash scripts/kube-apiserver.sh; apt-get install -y etcd-server (or set GPUPROV_KUBE_APISERVER / GPUPROV_ETCD)',
    ),
)('k3s checks against a real kube-apiserver', () => {
  let root: string;
  let ssh: SshKeyFile;
  let etcd: Etcd;
  let worker: TestWorker;
  /** Boot script + open ports (Direct API access). */
  let direct: SimulatedK3sCloud;
  /** No boot script, no open ports (SSH push, SshTunnel access). */
  let tunnelled: SimulatedK3sCloud;
  const handles: WorkflowHandle[] = [];
  let n = 0;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'gpuprov-k3s-real-'));
    ssh = await loadOrCreateSshIdentity(join(root, 'keys'));
    const t0 = Date.now();
    etcd = await startEtcd(join(root, 'etcd'));
    process.stderr.write(`real kube-apiserver ${KUBE_APISERVER_VERSION} (${kubeApiserverPath()}); etcd up in ${Date.now() - t0} ms\n`);
    const realApi = { apiserver: kubeApiserverPath(), etcd: etcd.url };
    direct = new SimulatedK3sCloud('real-direct', join(root, 'direct'), { bootScript: true, openPorts: true }, realApi);
    tunnelled = new SimulatedK3sCloud('real-tunnel', join(root, 'tunnel'), { bootScript: false, openPorts: false }, realApi);
    const activities = createActivities({ registry: new ProviderRegistry([direct, tunnelled]), ssh, owner: 'default' });
    worker = await startTestWorker({ activities });
  }, 120_000);

  afterAll(async () => {
    for (const h of handles) await h.signal(teardownSignal).catch(() => undefined);
    for (const h of handles) await h.result().catch(() => undefined);
    await worker?.stop();
    await direct?.close();
    await tunnelled?.close();
    await etcd?.stop();
    rmSync(root, { recursive: true, force: true });
  }, 120_000);

  async function launch(cloud: SimulatedK3sCloud, host: SimHost, o: { gpu?: GpuRequest; k3s?: Partial<K3sTuning> } = {}) {
    const name = `kreal${process.pid}x${n++}`;
    cloud.host(name, host);
    const client = await testEnv().client();
    const h = await client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
      taskQueue: worker.taskQueue,
      workflowId: vmWorkflowId(name),
      args: [{ spec: { name, clouds: [cloud.name], ...(o.gpu ? { gpu: o.gpu } : {}) }, tuning: { ...FAST, ...K3S_REAL, ...o.k3s } }],
    });
    handles.push(h);
    return { name, h };
  }

  const settled = (h: WorkflowHandle): Promise<VmStatus> =>
    waitFor(h, (s) => s.stage === 'ready' || s.stage === 'k8s-failed' || s.stage === 'failed', 'k3s to settle', SETTLE_MS);
  const k8s = (s: VmStatus): K3sStatus => s.k8s as K3sStatus;
  /** Tear the VM down now: its API server stops with the host (one running at a time). */
  const down = async (h: WorkflowHandle): Promise<void> => {
    await h.signal(teardownSignal);
    await h.result().catch(() => undefined);
  };

  function io(): Io & { stdout: string[]; stderr: string[] } {
    const stdout: string[] = [];
    const stderr: string[] = [];
    const env = {
      ...process.env,
      TEMPORAL_ADDRESS: testEnv().address,
      TEMPORAL_NAMESPACE: testEnv().namespace,
      GPUPROV_CONFIG_DIR: join(root, 'config'),
      GPUPROV_STATE_DIR: join(root, 'state'),
    };
    return { stdout, stderr, out: (s) => stdout.push(s), err: (s) => stderr.push(s), isTTY: false, env };
  }

  /** The real server's answers the checks read, through the user's kubeconfig. */
  async function clusterThrough(path: string) {
    const [readyz, version, nodes, coredns] = await Promise.all(
      ['/readyz', '/version', '/api/v1/nodes', '/apis/apps/v1/namespaces/kube-system/deployments/coredns'].map((p) => apiGet(path, p)),
    );
    return { readyz: readyz!, version: JSON.parse(version!.body), nodes: JSON.parse(nodes!.body), coredns: JSON.parse(coredns!.body) };
  }

  it(
    'boot route, Direct: AwaitApi, SAN check, node, CoreDNS on the real server; kubeconfig fetched and used',
    async () => {
      const { name, h } = await launch(direct, { boot: 'normal' });
      const s = await settled(h);
      expect(s.stage, k8s(s).note).toBe('ready');
      expect(k8s(s)).toMatchObject({ enabled: true, access: 'Direct', route: 'boot', pushes: 0 });

      const cli = io();
      expect(await kubeconfigCommand.run([name, '--identity', ssh.privateKeyPath], cli), cli.stderr.join('\n')).toBe(0);
      const path = kubeconfigPathOf(cli.stdout);
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(parse(readFileSync(path, 'utf8')).clusters[0].cluster.server).toBe(`https://${s.endpoint!.host}:${k8s(s).apiPort}`);
      const c = await clusterThrough(path);
      expect(c.readyz).toEqual({ status: 200, body: 'ok' });
      expect(c.version.gitVersion).toBe(KUBE_APISERVER_VERSION);
      expect(c.nodes.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(['sim-node']);
      expect(c.nodes.items[0].status.conditions).toContainEqual(expect.objectContaining({ type: 'Ready', status: 'True' }));
      expect(c.nodes.items[0].status.allocatable['nvidia.com/gpu']).toBeUndefined();
      expect(c.coredns.status).toMatchObject({ availableReplicas: 1 });
      await down(h);
    },
    SETTLE_MS + 60_000,
  );

  it(
    'serving certificate without the public host → one installer re-run, the real server restarted with the SAN',
    async () => {
      const { name, h } = await launch(direct, { boot: 'normal', metadata: false });
      const s = await settled(h);
      expect(s.stage, k8s(s).note).toBe('ready');
      expect(k8s(s).pushes).toBe(1);
      expect(k8s(s).route).toMatch(/certificate lacks 127\.0\.0\.1/);
      const st = direct.state(name);
      expect(st.k3sRestarts).toBe(1);
      expect(st.marker).toContain('sans=127.0.0.1');
      await down(h);
    },
    SETTLE_MS + 60_000,
  );

  it(
    'GPU offer on a GPU host → the real node reports nvidia.com/gpu allocatable, ready',
    async () => {
      const { name, h } = await launch(direct, { boot: 'normal', gpu: true }, { gpu: { model: 'SIM', count: 1 } });
      const s = await settled(h);
      expect(s.stage, k8s(s).note).toBe('ready');
      const cli = io();
      expect(await kubeconfigCommand.run([name, '--identity', ssh.privateKeyPath], cli), cli.stderr.join('\n')).toBe(0);
      const c = await clusterThrough(kubeconfigPathOf(cli.stdout));
      expect(c.nodes.items[0].status.allocatable['nvidia.com/gpu']).toBe('1');
      await down(h);
    },
    SETTLE_MS + 60_000,
  );

  it(
    'GPU offer whose real node reports no nvidia.com/gpu → k8s-failed naming it',
    async () => {
      const { h } = await launch(direct, { boot: 'normal', gpu: false }, { gpu: { model: 'SIM', count: 1 }, k3s: { k3sValidateDeadlineMs: 10_000 } });
      const s = await settled(h);
      expect(s.stage).toBe('k8s-failed');
      expect(k8s(s).note).toMatch(/nvidia\.com\/gpu/);
      expect(k8s(s).note).not.toMatch(/node not Ready|CoreDNS/);
      await down(h);
    },
    SETTLE_MS + 60_000,
  );

  it(
    'no boot route → SSH push; SshTunnel: SAN check through the tunnel, provision tunnel + kubeconfig against the real server',
    async () => {
      const { name, h } = await launch(tunnelled, {});
      const s = await settled(h);
      expect(s.stage, k8s(s).note).toBe('ready');
      expect(k8s(s)).toMatchObject({ access: 'SshTunnel', route: 'no-boot-route', pushes: 1 });

      const localPort = await freePort();
      const cli = io();
      await withTunnel([name, '--port', String(localPort), '--identity', ssh.privateKeyPath], localPort, cli.env, async () => {
        expect(await kubeconfigCommand.run([name, '--port', String(localPort), '--identity', ssh.privateKeyPath], cli), cli.stderr.join('\n')).toBe(0);
        const path = kubeconfigPathOf(cli.stdout);
        expect(parse(readFileSync(path, 'utf8')).clusters[0].cluster.server).toBe(`https://127.0.0.1:${localPort}`);
        const c = await clusterThrough(path);
        expect(c.readyz).toEqual({ status: 200, body: 'ok' });
        expect(c.version.gitVersion).toBe(KUBE_APISERVER_VERSION);
        expect(c.coredns.status).toMatchObject({ availableReplicas: 1 });
      });
      await down(h);
    },
    SETTLE_MS + 60_000,
  );
});
