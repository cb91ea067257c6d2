import { describe, expect, it } from 'vitest';
import { apiAccessFor, k3sWanted, openPortsFor } from '../../../src/core/k3s-access';
import { clusterFacts, parseSubjectAltName, sanCovers, unmetConditions } from '../../../src/k3s/checks';
import { apiServerUrl, rewriteKubeconfig, serverOf } from '../../../src/k3s/kubeconfig';
import { apiPortOf } from '../../../src/k3s/remote';

const node = (ready: string, alloc: Record<string, string> = {}) => ({
  metadata: { name: 'n' },
  status: { conditions: [{ type: 'Ready', status: ready }], allocatable: alloc },
});
const coredns = (available: number) =>
  JSON.stringify({ status: { availableReplicas: available, conditions: [{ type: 'Available', status: available > 0 ? 'True' : 'False' }] } });

describe('cluster checks', () => {
  it('a Ready node with CoreDNS available and a GPU is valid for a GPU offer', () => {
    const f = clusterFacts(JSON.stringify({ items: [node('True', { 'nvidia.com/gpu': '1' })] }), coredns(1));
    expect(f).toEqual({ nodeReady: true, coreDnsAvailable: true, gpusAllocatable: 1 });
    expect(unmetConditions(f, 1)).toEqual([]);
  });
  it('names every unmet condition', () => {
    const f = clusterFacts(JSON.stringify({ items: [node('False')] }), 'Error from server (NotFound): deployments.apps "coredns" not found');
    expect(unmetConditions(f, 2)).toEqual(['node not Ready', 'CoreDNS not available', 'node reports no allocatable nvidia.com/gpu (the offer has 2 GPU(s))']);
  });
  it('no GPU needed for a CPU offer; no nodes = not Ready', () => {
    expect(unmetConditions(clusterFacts(JSON.stringify({ items: [node('True')] }), coredns(1)), 0)).toEqual([]);
    expect(clusterFacts(JSON.stringify({ items: [] }), coredns(1)).nodeReady).toBe(false);
  });
  it('a node list that is not JSON is an error (the API is not answering)', () => {
    expect(() => clusterFacts('The connection to the server was refused', coredns(1))).toThrow(/not JSON/);
  });
});

describe('SAN coverage', () => {
  const sans = parseSubjectAltName('DNS:localhost, DNS:kubernetes.default, DNS:*.example.com, IP Address:10.0.0.5, IP Address:2001:DB8:0:0:0:0:0:1');
  it('parses DNS and IP entries', () => {
    expect(sans.dns).toEqual(['localhost', 'kubernetes.default', '*.example.com']);
    expect(sans.ips).toEqual(['10.0.0.5', '2001:db8:0:0:0:0:0:1']);
  });
  it.each([
    ['10.0.0.5', true],
    ['10.0.0.6', false],
    ['localhost', true],
    ['LOCALHOST', true],
    ['api.example.com', true],
    ['a.b.example.com', false],
    ['example.com', false],
    ['127.0.0.1', false],
  ])('%s → %s', (host, want) => {
    expect(sanCovers(sans, host)).toBe(want);
  });
});

describe('access and kubeconfig', () => {
  it('Direct when the cloud opens ports, else SshTunnel; 6443 opened only for Direct k3s', () => {
    expect(apiAccessFor({ openPorts: true })).toBe('Direct');
    expect(apiAccessFor({ openPorts: false })).toBe('SshTunnel');
    expect(openPortsFor({ openPorts: true }, true)).toEqual([22, 6443]);
    expect(openPortsFor({ openPorts: true }, false)).toEqual([22]);
    expect(openPortsFor({ openPorts: false }, true)).toEqual([22]);
  });
  it('k3s runs unless off or unsupported', () => {
    expect(k3sWanted(undefined, { k8s: true })).toBe(true);
    expect(k3sWanted('auto', { k8s: true })).toBe(true);
    expect(k3sWanted('off', { k8s: true })).toBe(false);
    expect(k3sWanted('on', { k8s: false })).toBe(false);
  });
  it('server URL per access path', () => {
    expect(apiServerUrl({ access: 'Direct', host: '203.0.113.7', apiPort: 6443, localPort: 7000 })).toBe('https://203.0.113.7:6443');
    expect(apiServerUrl({ access: 'Direct', host: '2001:db8::1', apiPort: 6443, localPort: 7000 })).toBe('https://[2001:db8::1]:6443');
    expect(apiServerUrl({ access: 'SshTunnel', host: '203.0.113.7', apiPort: 6443, localPort: 7000 })).toBe('https://127.0.0.1:7000');
  });
  it('rewrites server and names cluster, user and context after the VM', () => {
    const k3s = `apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: Q0E=
    server: https://127.0.0.1:6443
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
    client-certificate-data: Q0VSVA==
    client-key-data: S0VZ
`;
    const out = rewriteKubeconfig(k3s, { name: 'gpu1', server: 'https://203.0.113.7:6443' });
    expect(serverOf(out)).toBe('https://203.0.113.7:6443');
    expect(out).toContain('current-context: gpu1');
    expect(out).toContain('certificate-authority-data: Q0E=');
    expect(out).toContain('client-key-data: S0VZ');
    expect(out).not.toMatch(/name: default/);
    expect(() => rewriteKubeconfig('', { name: 'x', server: 'https://h' })).toThrow(/no usable kubeconfig/);
  });
  it('API port from the remote output; 6443 when none', () => {
    expect(apiPortOf('api_port=16443\nreadyz=ok\n')).toBe(16443);
    expect(apiPortOf('api_port=\n')).toBe(6443);
  });
});
