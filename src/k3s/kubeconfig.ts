/** Rewrite the kubeconfig k3s writes on the VM for use on the user's machine. Pure. */
import { parse, stringify } from 'yaml';

interface Named<T> {
  name: string;
  [k: string]: unknown;
  cluster?: T;
  context?: T;
  user?: T;
}

interface KubeConfig {
  clusters?: Named<{ server?: string; [k: string]: unknown }>[];
  contexts?: Named<{ cluster?: string; user?: string; [k: string]: unknown }>[];
  users?: Named<Record<string, unknown>>[];
  'current-context'?: string;
  [k: string]: unknown;
}

/**
 * k3s's admin kubeconfig has one cluster, context and user, all named `default`, with
 * `server: https://127.0.0.1:<port>`. Point the server at `server` and name all three `name`.
 */
export function rewriteKubeconfig(text: string, o: { name: string; server: string }): string {
  const doc = parse(text) as KubeConfig | null;
  if (!doc || !Array.isArray(doc.clusters) || doc.clusters.length === 0 || !Array.isArray(doc.contexts) || !Array.isArray(doc.users)) {
    throw new Error('the VM returned no usable kubeconfig (is k3s installed?)');
  }
  const cluster = doc.clusters[0]!;
  const context = doc.contexts[0];
  const user = doc.users[0];
  cluster.name = o.name;
  cluster.cluster = { ...cluster.cluster, server: o.server };
  if (user) user.name = o.name;
  const ctx = { name: o.name, context: { ...context?.context, cluster: o.name, user: o.name } };
  return stringify({ ...doc, clusters: [cluster], contexts: [ctx], users: user ? [user] : [], 'current-context': o.name });
}

/** The `server:` a kubeconfig names. */
export function serverOf(text: string): string | undefined {
  const doc = parse(text) as KubeConfig | null;
  return doc?.clusters?.[0]?.cluster?.server;
}

/** The API server URL the user's kubeconfig points at. */
export function apiServerUrl(o: { access: 'Direct' | 'SshTunnel'; host: string; apiPort: number; localPort: number }): string {
  if (o.access === 'SshTunnel') return `https://127.0.0.1:${o.localPort}`;
  const host = o.host.includes(':') ? `[${o.host}]` : o.host;
  return `https://${host}:${o.apiPort}`;
}
