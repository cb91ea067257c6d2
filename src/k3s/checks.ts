/**
 * Pure cluster checks for Validate: node Ready, CoreDNS available, `nvidia.com/gpu`
 * allocatable, and whether the API certificate's SANs cover the host the user will use.
 */

/** The parts of a Kubernetes NodeList / Deployment the checks read. */
interface NodeList {
  items?: { metadata?: { name?: string }; status?: { conditions?: { type?: string; status?: string }[]; allocatable?: Record<string, string> } }[];
}
interface Deployment {
  status?: { availableReplicas?: number; conditions?: { type?: string; status?: string }[] };
}

export interface ClusterFacts {
  nodeReady: boolean;
  coreDnsAvailable: boolean;
  /** Sum of allocatable `nvidia.com/gpu` over the nodes. */
  gpusAllocatable: number;
}

function json<T>(text: string, what: string): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(`${what}: not JSON: ${text.trim().slice(0, 200)}`);
  }
}

/** Read the facts from the raw API answers (`/api/v1/nodes`, the CoreDNS deployment). */
export function clusterFacts(nodesText: string, coreDnsText: string): ClusterFacts {
  const nodes = json<NodeList>(nodesText, 'nodes');
  const items = nodes.items ?? [];
  const nodeReady = items.length > 0 && items.every((n) => (n.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'));
  const gpusAllocatable = items.reduce((sum, n) => sum + (Number(n.status?.allocatable?.['nvidia.com/gpu'] ?? 0) || 0), 0);
  let coreDnsAvailable = false;
  try {
    const d = json<Deployment>(coreDnsText, 'coredns');
    coreDnsAvailable = (d.status?.availableReplicas ?? 0) > 0 && (d.status?.conditions ?? []).some((c) => c.type === 'Available' && c.status === 'True');
  } catch {
    coreDnsAvailable = false; // not created yet: k3s deploys CoreDNS shortly after the API is up
  }
  return { nodeReady, coreDnsAvailable, gpusAllocatable };
}

/** What is still missing; empty = the cluster is valid. */
export function unmetConditions(f: ClusterFacts, expectGpus: number): string[] {
  const out: string[] = [];
  if (!f.nodeReady) out.push('node not Ready');
  if (!f.coreDnsAvailable) out.push('CoreDNS not available');
  if (expectGpus > 0 && f.gpusAllocatable < 1) out.push(`node reports no allocatable nvidia.com/gpu (the offer has ${expectGpus} GPU(s))`);
  return out;
}

export interface SanList {
  dns: string[];
  ips: string[];
}

/** Parse a certificate's subjectAltName as Node prints it (`DNS:a, IP Address:1.2.3.4`). */
export function parseSubjectAltName(s: string | undefined): SanList {
  const out: SanList = { dns: [], ips: [] };
  for (const part of (s ?? '').split(',')) {
    const p = part.trim();
    if (p.startsWith('DNS:')) out.dns.push(p.slice(4).toLowerCase());
    else if (p.startsWith('IP Address:')) out.ips.push(p.slice(11).toLowerCase());
  }
  return out;
}

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/** True when the SANs cover `host` (IP: exact match; name: exact or one-label wildcard). */
export function sanCovers(sans: SanList, host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  if (IPV4.test(h) || h.includes(':')) return sans.ips.includes(h);
  return sans.dns.some((d) => d === h || (d.startsWith('*.') && h.slice(h.indexOf('.') + 1) === d.slice(2) && h.indexOf('.') > 0));
}
