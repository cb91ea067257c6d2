// SIMULATED K3S HOST — the `k3s` test double. Not Kubernetes: it serves the few API paths
// gpuprov reads, with a CA, an admin client certificate and a serving certificate whose SANs
// are exactly the installer's `tls-san` list plus `localhost` and `kubernetes.default` (real
// k3s also adds 127.0.0.1 and the node IPs; the double leaves IPs out unless listed, so the SAN
// check can be exercised on loopback).
//   k3s server                       serve HTTPS on config.yaml's https-listen-port (127.0.0.1)
//   k3s kubectl get --raw[=]PATH     GET PATH with the admin kubeconfig, print the body
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { request, createServer } from 'node:https';
import { join } from 'node:path';

const P = process.env.GPUPROV_ROOT_PREFIX ?? '';
const H = process.env.GPUPROV_SIM_HOST ?? '';
const CONFIG = join(P, 'etc/rancher/k3s/config.yaml');
const KUBECONFIG = join(P, 'etc/rancher/k3s/k3s.yaml');
const TLS = join(P, 'var/lib/rancher/k3s/server/tls');
const GPU_MANIFEST = join(P, 'var/lib/rancher/k3s/server/manifests/gpuprov-nvidia.yaml');

function readConfig() {
  const text = existsSync(CONFIG) ? readFileSync(CONFIG, 'utf8') : '';
  const port = Number(/^https-listen-port:\s*(\d+)/m.exec(text)?.[1] ?? 6443);
  const sans = [];
  let on = false;
  for (const line of text.split('\n')) {
    if (/^tls-san:/.test(line)) { on = true; continue; }
    const m = /^\s+-\s+"?([^"]+)"?\s*$/.exec(line);
    if (on && m) sans.push(m[1]);
    else if (on) on = false;
  }
  return { port, sans };
}

const ssl = (...args) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });

function ensureCa() {
  mkdirSync(TLS, { recursive: true });
  const ca = join(TLS, 'server-ca.crt');
  if (!existsSync(ca)) {
    ssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', join(TLS, 'server-ca.key'), '-out', ca, '-days', '3650', '-subj', '/CN=k3s-server-ca-simulated');
  }
  const client = join(TLS, 'client-admin.crt');
  if (!existsSync(client)) {
    ssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', join(TLS, 'client-admin.key'), '-out', join(TLS, 'client-admin.csr'), '-subj', '/O=system:masters/CN=system:admin');
    ssl('x509', '-req', '-in', join(TLS, 'client-admin.csr'), '-CA', ca, '-CAkey', join(TLS, 'server-ca.key'), '-CAcreateserial', '-out', client, '-days', '3650');
  }
}

function issueServing(sans) {
  const names = ['localhost', 'kubernetes', 'kubernetes.default', ...sans];
  const alt = [...new Set(names)].map((s) => (/^[\d.]+$/.test(s) || s.includes(':') ? `IP:${s}` : `DNS:${s}`)).join(',');
  const ext = join(TLS, 'serving.ext');
  writeFileSync(ext, `subjectAltName=${alt}\n`);
  ssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', join(TLS, 'serving-kube-apiserver.key'), '-out', join(TLS, 'serving.csr'), '-subj', '/O=k3s/CN=k3s');
  ssl('x509', '-req', '-in', join(TLS, 'serving.csr'), '-CA', join(TLS, 'server-ca.crt'), '-CAkey', join(TLS, 'server-ca.key'), '-CAcreateserial', '-out', join(TLS, 'serving-kube-apiserver.crt'), '-days', '365', '-extfile', ext);
}

const b64 = (f) => readFileSync(join(TLS, f)).toString('base64');

function writeKubeconfig(port) {
  const text = `apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: ${b64('server-ca.crt')}
    server: https://127.0.0.1:${port}
  name: default
contexts:
- context:
    cluster: default
    user: default
  name: default
current-context: default
kind: Config
preferences: {}
users:
- name: default
  user:
    client-certificate-data: ${b64('client-admin.crt')}
    client-key-data: ${b64('client-admin.key')}
`;
  mkdirSync(join(P, 'etc/rancher/k3s'), { recursive: true });
  writeFileSync(KUBECONFIG, text, { mode: 0o600 });
  chmodSync(KUBECONFIG, 0o600);
}

/** The simulated hardware has a GPU, and the installer deployed the device plugin. */
function gpus() {
  return existsSync(join(H, 'sim/bin/nvidia-smi')) && existsSync(GPU_MANIFEST) ? 1 : 0;
}

function server() {
  const { port, sans } = readConfig();
  ensureCa();
  issueServing(sans);
  writeKubeconfig(port);
  const started = Date.now();
  const send = (res, code, body) => {
    res.writeHead(code, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json' });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
  const status = (code, reason, message) => ({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message, reason, code });
  const srv = createServer(
    { key: readFileSync(join(TLS, 'serving-kube-apiserver.key')), cert: readFileSync(join(TLS, 'serving-kube-apiserver.crt')), ca: readFileSync(join(TLS, 'server-ca.crt')), requestCert: true, rejectUnauthorized: false },
    (req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (path === '/readyz' || path === '/livez' || path === '/healthz') return send(res, 200, 'ok');
      if (!req.socket.authorized) return send(res, 401, status(401, 'Unauthorized', 'Unauthorized'));
      if (path === '/version') return send(res, 200, { major: '1', minor: '33', gitVersion: 'v1.33.0+k3s-simulated' });
      if (path === '/api/v1/nodes') {
        const allocatable = { cpu: '4', memory: '16Gi', pods: '110' };
        const n = gpus();
        if (n > 0) allocatable['nvidia.com/gpu'] = String(n);
        return send(res, 200, {
          kind: 'NodeList', apiVersion: 'v1', metadata: {},
          items: [{ metadata: { name: 'sim-node' }, status: { allocatable, capacity: allocatable, conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }] } }],
        });
      }
      if (path === '/apis/apps/v1/namespaces/kube-system/deployments/coredns') {
        if (Date.now() - started < 1_000) return send(res, 404, status(404, 'NotFound', 'deployments.apps "coredns" not found'));
        return send(res, 200, {
          kind: 'Deployment', apiVersion: 'apps/v1', metadata: { name: 'coredns', namespace: 'kube-system' },
          status: { replicas: 1, readyReplicas: 1, availableReplicas: 1, conditions: [{ type: 'Available', status: 'True' }] },
        });
      }
      return send(res, 404, status(404, 'NotFound', `the server could not find the requested resource (${path})`));
    },
  );
  srv.listen(port, '127.0.0.1', () => writeFileSync(join(H, 'sim/k3s.ready'), `${process.pid}\n`));
  const stop = () => srv.close(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

function field(text, key) {
  return new RegExp(`${key}:\\s*(\\S+)`).exec(text)?.[1];
}

function kubectlGetRaw(path) {
  if (!existsSync(KUBECONFIG)) {
    process.stderr.write(`error: ${KUBECONFIG} not found\n`);
    process.exit(1);
  }
  const kc = readFileSync(KUBECONFIG, 'utf8');
  const url = new URL(field(kc, 'server'));
  const dec = (k) => Buffer.from(field(kc, k) ?? '', 'base64');
  const req = request(
    { host: url.hostname, port: url.port, path, method: 'GET', ca: dec('certificate-authority-data'), cert: dec('client-certificate-data'), key: dec('client-key-data'), servername: 'localhost', timeout: 5_000 },
    (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if ((res.statusCode ?? 500) < 300) {
          process.stdout.write(body);
          process.exit(0);
        }
        process.stderr.write(`Error from server (${res.statusCode}): ${body}\n`);
        process.exit(1);
      });
    },
  );
  req.on('error', (err) => {
    process.stderr.write(`The connection to the server ${url.host} was refused - did you specify the right host or port? (${err.message})\n`);
    process.exit(1);
  });
  req.end();
}

const args = process.argv.slice(2);
if (args[0] === 'server') server();
else if (args[0] === 'kubectl' && args[1] === 'get') {
  const raw = args.find((a) => a.startsWith('--raw='))?.slice(6) ?? args[args.indexOf('--raw') + 1];
  if (!raw) { process.stderr.write('simulated kubectl: only `get --raw PATH`\n'); process.exit(1); }
  kubectlGetRaw(raw);
} else {
  process.stderr.write(`simulated k3s: unsupported ${args.join(' ')}\n`);
  process.exit(1);
}
