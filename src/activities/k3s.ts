/**
 * k3s activities: one SSH round trip each, with the worker's key and the VM's pinned host key.
 * Not-ready-yet is a retryable `NotReady` failure (the retry policy polls). Nothing returned
 * holds a secret: the kubeconfig never leaves the VM here (the CLI fetches it with the user's key).
 */
import { connect as tlsConnect, type PeerCertificate, type TLSSocket } from 'node:tls';
import type { Duplex } from 'node:stream';
import { ApplicationFailure } from '@temporalio/common';
import { FAILURE_TYPES } from '../core/failures';
import type { BootScript, SshEndpoint } from '../core/provider';
import { renderShellScript } from '../providers/cloud-init';
import type { ApiAccess } from '../core/k3s-access';
import { parseBootProbe, type BootProbe } from '../core/boot-probe';
import { clusterFacts, parseSubjectAltName, sanCovers, unmetConditions, type SanList } from '../k3s/checks';
import { installerScript, type InstallerOptions } from '../k3s/installer';
import { apiPortOf, BOOT_PROBE_SCRIPT, keyValues, READYZ_SCRIPT, RUN_INSTALLER_COMMAND, SECTION, VALIDATE_SCRIPT } from '../k3s/remote';
import { requireWorkerKey, throwSshFailure, withSsh, type SshIdentity, type SshSession, type SshTarget, type WorkerKeyRef } from '../ssh';
import { notReady } from './failures';

/** Where the k3s activities log in: the launch's endpoint, login user and pinned host key. */
export interface K3sTarget {
  endpoint: SshEndpoint;
  /** Login user when the endpoint names none. */
  defaultUser: string;
  /** `<type> <base64>` pinned at launch. */
  hostKey?: string;
  /** The key the VM was created with: a worker with another key fails at once (WorkerKeyMismatch). */
  workerKey?: WorkerKeyRef;
}

export interface PushInput extends InstallerOptions {
  target: K3sTarget;
}

export interface ValidateInput {
  target: K3sTarget;
  access: ApiAccess;
  /** The host the user will reach the API at (Direct: the VM's public host; tunnel: 127.0.0.1). */
  apiHost: string;
  /** GPUs the offer has: `nvidia.com/gpu` must be allocatable when > 0. */
  expectGpus: number;
  /** Epoch ms after which an unmet condition is final (non-retryable, naming what is missing). */
  giveUpAt?: number;
}

export type ValidateResult =
  | { ok: true; apiPort: number; sans: SanList }
  /** The API certificate does not cover `apiHost`: re-run the installer with it as a SAN. */
  | { ok: false; missingSan: string; apiPort: number; sans: SanList };

/** The installer's own limit (the activity's start-to-close timeout usually ends it first). */
const INSTALLER_TIMEOUT_MS = 15 * 60_000;

function sshTarget(t: K3sTarget): SshTarget {
  return { host: t.endpoint.host, port: t.endpoint.port, user: t.endpoint.user ?? t.defaultUser, ...(t.hostKey ? { hostKey: t.hostKey } : {}) };
}

function tail(s: string, n = 800): string {
  const t = s.trim();
  return t.length > n ? `…${t.slice(-n)}` : t;
}

/** The API's serving certificate, through the access path the user will use. */
async function servingCert(s: SshSession, access: ApiAccess, host: string, port: number): Promise<PeerCertificate> {
  const socket: Duplex | undefined = access === 'SshTunnel' ? await s.forward('127.0.0.1', port) : undefined;
  return new Promise<PeerCertificate>((resolve, reject) => {
    const opts = { rejectUnauthorized: false, servername: /^[\d.]+$|:/.test(host) ? '' : host, ALPNProtocols: ['http/1.1'] };
    const tls: TLSSocket = socket ? tlsConnect({ ...opts, socket }) : tlsConnect({ ...opts, host, port });
    const timer = setTimeout(() => {
      tls.destroy();
      reject(new Error(`TLS handshake with the API (${access}) timed out`));
    }, 10_000);
    tls.once('secureConnect', () => {
      clearTimeout(timer);
      const cert = tls.getPeerCertificate();
      tls.end();
      resolve(cert);
    });
    tls.once('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`API not reachable ${access === 'Direct' ? `at ${host}:${port}` : 'through the SSH tunnel'}: ${err.message}`));
    });
  });
}

/** One SSH round trip to a k3s target with the worker's key (refused at once on a key mismatch). */
type K3sSsh = <T>(t: K3sTarget, fn: (s: SshSession) => Promise<T>) => Promise<T>;

/** CheckBootInstall's one round trip: marker, lock, cloud-init, k3s unit, GPU. */
async function readBootProbe(ssh: K3sSsh, target: K3sTarget): Promise<BootProbe> {
  const r = await ssh(target, (s) => s.exec(BOOT_PROBE_SCRIPT, { timeoutMs: 60_000 }));
  return parseBootProbe(r.stdout);
}

/** Run the (idempotent, flock-serialised) installer over SSH and wait for it. */
async function pushInstaller(ssh: K3sSsh, input: PushInput): Promise<{ log: string }> {
  const script = renderShellScript(installerScript(input));
  const r = await ssh(input.target, (s) => s.exec(RUN_INSTALLER_COMMAND, { stdin: script, timeoutMs: INSTALLER_TIMEOUT_MS }));
  if (r.code !== 0) {
    throw ApplicationFailure.create({
      type: FAILURE_TYPES.K3sInstallFailed,
      message: `k3s installer exited ${r.code}: ${tail(r.stderr || r.stdout)}`,
      nonRetryable: false,
    });
  }
  return { log: tail(r.stderr, 400) };
}

/** AwaitApi: NotReady until k3s answers `/readyz` with `ok`. */
async function awaitApi(ssh: K3sSsh, target: K3sTarget, giveUpAt?: number): Promise<{ apiPort: number }> {
  const r = await ssh(target, (s) => s.exec(READYZ_SCRIPT, { timeoutMs: 60_000 }));
  const readyz = keyValues(r.stdout).get('readyz') ?? '';
  if (readyz.trim() !== 'ok') {
    const message = `k3s API not ready: ${readyz.trim() || tail(r.stderr, 200)}`;
    if (giveUpAt !== undefined && Date.now() >= giveUpAt) throw ApplicationFailure.create({ type: FAILURE_TYPES.K3sInvalid, message, nonRetryable: true });
    throw notReady(message);
  }
  return { apiPort: apiPortOf(r.stdout) };
}

/** Node Ready, CoreDNS available, GPUs allocatable, from VALIDATE_SCRIPT's sections; NotReady (or final after `giveUpAt`) otherwise. */
function requireValidCluster(stdout: string, input: ValidateInput): void {
  const [, nodes = '', coredns = ''] = stdout.split(`${SECTION}\n`);
  let unmet: string[];
  try {
    unmet = unmetConditions(clusterFacts(nodes, coredns), input.expectGpus);
  } catch (err) {
    throw notReady(`cluster not answering yet: ${(err as Error).message}`);
  }
  if (unmet.length > 0) {
    if (input.giveUpAt !== undefined && Date.now() >= input.giveUpAt)
      throw ApplicationFailure.create({ type: FAILURE_TYPES.K3sInvalid, message: `cluster not valid: ${unmet.join('; ')}`, nonRetryable: true });
    throw notReady(`cluster not valid yet: ${unmet.join('; ')}`);
  }
}

/**
 * Validate: the API certificate covers the user's host (checked through the chosen access
 * path, which also proves it reachable), then node Ready, CoreDNS available, GPUs allocatable.
 */
async function validateCluster(ssh: K3sSsh, input: ValidateInput): Promise<ValidateResult> {
  return ssh(input.target, async (s) => {
    const r = await s.exec(VALIDATE_SCRIPT, { timeoutMs: 60_000 });
    const apiPort = apiPortOf(r.stdout);
    const host = input.access === 'Direct' ? input.apiHost : '127.0.0.1';
    let cert: PeerCertificate;
    try {
      cert = await servingCert(s, input.access, host, apiPort);
    } catch (err) {
      throw notReady((err as Error).message);
    }
    const sans = parseSubjectAltName(cert.subjectaltname);
    if (!sanCovers(sans, input.apiHost)) return { ok: false, missingSan: input.apiHost, apiPort, sans };
    requireValidCluster(r.stdout, input);
    return { ok: true, apiPort, sans };
  });
}

export function createK3sActivities(deps: { ssh: SshIdentity }) {
  const ssh: K3sSsh = async (t, fn) => {
    requireWorkerKey(deps.ssh, t.workerKey);
    return withSsh(sshTarget(t), deps.ssh, fn).catch(throwSshFailure);
  };

  return {
    /** The installer and its environment, as the VM's boot script (workflows cannot read files). */
    async k3sBootScript(o: InstallerOptions = {}): Promise<BootScript> {
      return installerScript(o);
    },
    /** CheckBootInstall's one round trip: marker, lock, cloud-init, k3s unit, GPU. */
    readBootProbe: (target: K3sTarget): Promise<BootProbe> => readBootProbe(ssh, target),
    /** Run the (idempotent, flock-serialised) installer over SSH and wait for it. */
    pushInstaller: (input: PushInput): Promise<{ log: string }> => pushInstaller(ssh, input),
    /** AwaitApi: NotReady until k3s answers `/readyz` with `ok`. */
    awaitApi: (target: K3sTarget, giveUpAt?: number): Promise<{ apiPort: number }> => awaitApi(ssh, target, giveUpAt),
    /** Validate: certificate SANs through the access path, then node, CoreDNS, GPUs. */
    validateCluster: (input: ValidateInput): Promise<ValidateResult> => validateCluster(ssh, input),
  };
}

export type K3sActivities = ReturnType<typeof createK3sActivities>;
