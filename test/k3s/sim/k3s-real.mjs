// SIMULATED K3S HOST, REAL API — `k3s` as test/k3s/real-api.test.ts installs it: `k3s server`
// runs the real kube-apiserver ($GPUPROV_SIM_KUBE_APISERVER) on config.yaml's port with the
// certificates of k3s-common.mjs, storing in the suite's etcd ($GPUPROV_SIM_ETCD) under a prefix
// of its own per host. No kubelet and no controllers run: once /readyz answers, this process
// does through the API what they would have done — registers the node (Ready=True, and
// `nvidia.com/gpu` allocatable when the host has a GPU and the installer deployed the device
// plugin) and creates kube-system/coredns with an available status.
//   k3s server                       kube-apiserver, then the node and CoreDNS
//   k3s kubectl get --raw[=]PATH     GET PATH with the admin kubeconfig, print the body
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { H, TLS, apiRequest, ensureCa, gpus, issueServing, main, readConfig, ssl, writeKubeconfig } from './k3s-common.mjs';

const NODE = 'sim-node';
const LABELS = { 'k8s-app': 'kube-dns' };
const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function ensureServiceAccountKey() {
  if (existsSync(join(TLS, 'service.key'))) return;
  ssl('genrsa', '-out', join(TLS, 'service.key'), '2048');
  ssl('rsa', '-in', join(TLS, 'service.key'), '-pubout', '-out', join(TLS, 'service.pub'));
}

function apiserverArgs(port) {
  return [
    `--etcd-servers=${process.env.GPUPROV_SIM_ETCD}`,
    `--etcd-prefix=/gpuprov-sim/${basename(H)}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${port}`,
    `--cert-dir=${join(TLS, 'apiserver')}`,
    `--tls-cert-file=${join(TLS, 'serving-kube-apiserver.crt')}`,
    `--tls-private-key-file=${join(TLS, 'serving-kube-apiserver.key')}`,
    `--client-ca-file=${join(TLS, 'server-ca.crt')}`,
    '--authorization-mode=RBAC',
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-account-key-file=${join(TLS, 'service.pub')}`,
    `--service-account-signing-key-file=${join(TLS, 'service.key')}`,
    '--service-cluster-ip-range=10.43.0.0/16',
    '--endpoint-reconciler-type=none',
    '--profiling=false',
  ];
}

/** Create `path`'s object unless it exists, then merge `status` into its status subresource. */
async function ensureWithStatus(collection, name, object, status) {
  const created = await apiRequest('POST', collection, object);
  if (created.status >= 300 && created.status !== 409) throw new Error(`POST ${collection}: ${created.status} ${created.body}`);
  const patched = await apiRequest('PATCH', `${collection}/${name}/status`, { status });
  if (patched.status >= 300) throw new Error(`PATCH ${collection}/${name}/status: ${patched.status} ${patched.body}`);
}

function registerNode() {
  const resources = { cpu: '4', memory: '16Gi', pods: '110' };
  if (gpus() > 0) resources['nvidia.com/gpu'] = String(gpus());
  const t = now();
  return ensureWithStatus('/api/v1/nodes', NODE, { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE, labels: { 'kubernetes.io/hostname': NODE } } }, {
    capacity: resources,
    allocatable: resources,
    conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'simulated kubelet', lastHeartbeatTime: t, lastTransitionTime: t }],
  });
}

function createCoreDns() {
  const t = now();
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'coredns', namespace: 'kube-system', labels: LABELS },
    spec: { replicas: 1, selector: { matchLabels: LABELS }, template: { metadata: { labels: LABELS }, spec: { containers: [{ name: 'coredns', image: 'rancher/mirrored-coredns-coredns:1.12.0' }] } } },
  };
  return ensureWithStatus('/apis/apps/v1/namespaces/kube-system/deployments', 'coredns', deployment, {
    observedGeneration: 1,
    replicas: 1,
    updatedReplicas: 1,
    readyReplicas: 1,
    availableReplicas: 1,
    conditions: [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', message: 'simulated', lastUpdateTime: t, lastTransitionTime: t }],
  });
}

/** What the kubelet and k3s's deploy controller would do, once the API is ready (bounded). */
async function bootstrap() {
  let last = '';
  for (let i = 0; i < 600; i++) {
    try {
      const ready = await apiRequest('GET', '/readyz');
      if (ready.status === 200) {
        await registerNode();
        await createCoreDns();
        process.stderr.write('simulated k3s: node registered, coredns available\n');
        return;
      }
      last = `readyz ${ready.status}`;
    } catch (err) {
      last = err.message; // not listening yet, or kube-system not created yet: try again
    }
    await sleep(500);
  }
  process.stderr.write(`simulated k3s: the API never became ready (${last})\n`);
}

function server() {
  const { port, sans } = readConfig();
  ensureCa();
  ensureServiceAccountKey();
  issueServing(sans);
  writeKubeconfig(port);
  const apiserver = spawn(process.env.GPUPROV_SIM_KUBE_APISERVER, apiserverArgs(port), { stdio: ['ignore', 'inherit', 'inherit'] });
  apiserver.once('exit', (code, signal) => {
    process.stderr.write(`simulated k3s: kube-apiserver exited (${signal ?? code})\n`);
    process.exit(0);
  });
  // Like systemd's unit start: the service is started, not yet ready (AwaitApi polls /readyz).
  writeFileSync(join(H, 'sim/k3s.ready'), `${process.pid}\n`);
  const stop = () => {
    apiserver.kill('SIGTERM');
    setTimeout(() => apiserver.kill('SIGKILL'), 3_000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  bootstrap().catch((err) => process.stderr.write(`simulated k3s: ${err.message}\n`));
}

main(server);
