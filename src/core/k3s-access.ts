/**
 * How the user reaches the k3s API, and the k8s part of the VM's status. Pure (workflows import it).
 */
import type { Capabilities } from './provider';
import type { K8sStatus } from './api';

/** `Direct`: the cloud opened the API port; `SshTunnel`: `provision tunnel <name>` forwards 127.0.0.1:6443. */
export type ApiAccess = 'Direct' | 'SshTunnel';

/** The k3s API port (k3s's default; the installer's `K3S_API_PORT` may change it). */
export const K3S_API_PORT = 6443;

export function apiAccessFor(caps: Pick<Capabilities, 'openPorts'>): ApiAccess {
  return caps.openPorts ? 'Direct' : 'SshTunnel';
}

/** Ports to open at create: SSH, plus the API when it is reached directly. */
export function openPortsFor(caps: Pick<Capabilities, 'openPorts'>, k3s: boolean): number[] {
  return k3s && apiAccessFor(caps) === 'Direct' ? [22, K3S_API_PORT] : [22];
}

/**
 * The `k8s` field of the status snapshot, as written by the k3s step. It extends the public
 * `VmStatus['k8s']` shape with the access path and the API port (the CLI reads them).
 */
/** The k3s part of the public status (kept as an alias for the k3s modules). */
export type K3sStatus = K8sStatus;

/** Whether k3s runs: wanted by the spec (`auto`/`on`) and supported by the cloud. */
export function k3sWanted(mode: 'auto' | 'on' | 'off' | undefined, caps: Pick<Capabilities, 'k8s'>): boolean {
  return mode !== 'off' && caps.k8s;
}
