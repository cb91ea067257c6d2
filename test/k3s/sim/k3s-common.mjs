// SIMULATED K3S HOST — what both k3s stand-ins share: the paths under the host directory, the
// installer's config.yaml as k3s reads it, the CA / admin client / serving certificates (the
// serving SANs are exactly the installer's `tls-san` list plus `localhost` and
// `kubernetes.default`: real k3s also adds 127.0.0.1 and the node IPs; leaving IPs out unless
// listed lets the SAN check be exercised on loopback), the admin kubeconfig, and
// `k3s kubectl get --raw PATH`.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';

export const P = process.env.GPUPROV_ROOT_PREFIX ?? '';
export const H = process.env.GPUPROV_SIM_HOST ?? '';
const CONFIG = join(P, 'etc/rancher/k3s/config.yaml');
const KUBECONFIG = join(P, 'etc/rancher/k3s/k3s.yaml');
export const TLS = join(P, 'var/lib/rancher/k3s/server/tls');
const GPU_MANIFEST = join(P, 'var/lib/rancher/k3s/server/manifests/gpuprov-nvidia.yaml');

export function readConfig() {
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

export const ssl = (...args) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });

export function ensureCa() {
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

export function issueServing(sans) {
  const names = ['localhost', 'kubernetes', 'kubernetes.default', ...sans];
  const alt = [...new Set(names)].map((s) => (/^[\d.]+$/.test(s) || s.includes(':') ? `IP:${s}` : `DNS:${s}`)).join(',');
  const ext = join(TLS, 'serving.ext');
  writeFileSync(ext, `subjectAltName=${alt}\n`);
  ssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', join(TLS, 'serving-kube-apiserver.key'), '-out', join(TLS, 'serving.csr'), '-subj', '/O=k3s/CN=k3s');
  ssl('x509', '-req', '-in', join(TLS, 'serving.csr'), '-CA', join(TLS, 'server-ca.crt'), '-CAkey', join(TLS, 'server-ca.key'), '-CAcreateserial', '-out', join(TLS, 'serving-kube-apiserver.crt'), '-days', '365', '-extfile', ext);
}

const b64 = (f) => readFileSync(join(TLS, f)).toString('base64');

export function writeKubeconfig(port) {
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
export function gpus() {
  return existsSync(join(H, 'sim/bin/nvidia-smi')) && existsSync(GPU_MANIFEST) ? 1 : 0;
}

function field(text, key) {
  return new RegExp(`${key}:\\s*(\\S+)`).exec(text)?.[1];
}

/** One request to the API as the admin kubeconfig's user; resolves with the status and body. */
export function apiRequest(method, path, body) {
  const kc = readFileSync(KUBECONFIG, 'utf8');
  const url = new URL(field(kc, 'server'));
  const dec = (k) => Buffer.from(field(kc, k) ?? '', 'base64');
  const headers = body === undefined ? {} : { 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' };
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path, method, headers, ca: dec('certificate-authority-data'), cert: dec('client-certificate-data'), key: dec('client-key-data'), servername: 'localhost', timeout: 5_000 },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 500, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err) => reject(new Error(`The connection to the server ${url.host} was refused - did you specify the right host or port? (${err.message})`)));
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

function kubectlGetRaw(path) {
  if (!existsSync(KUBECONFIG)) {
    process.stderr.write(`error: ${KUBECONFIG} not found\n`);
    process.exit(1);
  }
  apiRequest('GET', path).then(
    ({ status, body }) => {
      if (status < 300) {
        process.stdout.write(body);
        process.exit(0);
      }
      process.stderr.write(`Error from server (${status}): ${body}\n`);
      process.exit(1);
    },
    (err) => {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    },
  );
}

/** `k3s server` runs `server()`; `k3s kubectl get --raw[=]PATH` is answered here. */
export function main(server) {
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
}
