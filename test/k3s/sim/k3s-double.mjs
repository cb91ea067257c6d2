// SIMULATED K3S HOST — the `k3s` test double. Not Kubernetes: it serves the few API paths
// gpuprov reads over the certificates of k3s-common.mjs (test/k3s/real-api.test.ts runs the same
// steps against a real kube-apiserver: k3s-real.mjs).
//   k3s server                       serve HTTPS on config.yaml's https-listen-port (127.0.0.1)
//   k3s kubectl get --raw[=]PATH     GET PATH with the admin kubeconfig, print the body
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { join } from 'node:path';
import { H, TLS, ensureCa, gpus, issueServing, main, readConfig, writeKubeconfig } from './k3s-common.mjs';

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

main(server);
