/**
 * The fleet's desired shape and its slots. Pure and free of zod and Temporal, so both the
 * workflow (revision contract, expansion) and the CLI (after zod parsing) use it.
 */
import type { VmSpec } from '../api';

/** A VM's start options without its name (the slot names it). */
export type VmOptions = Omit<VmSpec, 'name'>;

/** When a node counts as ready: a command exits 0, an HTTP GET answers 2xx/3xx, or a TCP port accepts. Checked on the node. */
export type ReadyCheck = { command: string } | { http: { port?: number; path?: string } } | { tcp: { port?: number } };

/** Per-node bootstrap, run over SSH once the VM is ready (by src/activities/bootstrap.ts). */
export interface BootstrapSpec {
  /** Verification commands, run in order; the first non-zero exit fails the attempt. */
  verify: string[];
  /** Started detached; its stdout/stderr go to a sequence-numbered log on the node. */
  start: string;
  ready: ReadyCheck;
  /** Seconds from start until the ready check must pass. */
  timeout: number;
  /** Each node gets `PORT = portBase + index` (and http/tcp checks default to it). */
  portBase?: number;
  /** Extra environment for verify, start and command checks. */
  env?: Record<string, string>;
  /** Directory on the node for the log, pid and scripts (default `.gpuprov/bootstrap`, relative to the login home). */
  dir?: string;
}

/**
 * What the fleet does with a slot whose VM ends its k3s step `k8s-failed` (the VM is still up and
 * billed): `teardown` (default) deletes it through its own workflow and starts a replacement
 * after the restart backoff; `keep` leaves it up for inspection, counted as not ready.
 */
export type K8sFailurePolicy = 'teardown' | 'keep';

export interface FleetGroup {
  id: string;
  role: string;
  count: number;
  vm: VmOptions;
  bootstrap?: BootstrapSpec;
  /** Default `teardown`. A policy, not part of the VM spec: changing it replaces no VM. */
  onK8sFailure?: K8sFailurePolicy;
}

/** The declared shape; `generation` must increase whenever its content changes. */
export interface FleetShape {
  name: string;
  generation: number;
  groups: FleetGroup[];
}

/** One desired slot: a stable name and the immutable template its attempts are started from. */
export interface DesiredSlot {
  slot: string;
  group: string;
  index: number;
  template: SlotTemplate;
  /** Canonical text of the template: any difference means "replace the attempt". */
  key: string;
  /** The group's policy (absent = `teardown`); outside the template, so outside `key`. */
  onK8sFailure?: K8sFailurePolicy;
}

export interface SlotTemplate {
  role: string;
  vm: VmOptions;
  bootstrap?: BootstrapSpec;
}

/** Slot names (`<fleet>-<group>-<index>`) must stay valid VM names (≤ 32 characters, starting with a letter). */
export const NAME_RE = /^[a-z]([a-z0-9-]{0,17}[a-z0-9])?$/;
export const GROUP_RE = /^[a-z][a-z0-9]{0,7}$/;
/** Upper bound of nodes per group (a typo guard, not a quota). */
export const MAX_COUNT = 999;

export const slotName = (fleet: string, group: string, index: number): string => `${fleet}-${group}-${index}`;

/** JSON with object keys sorted, so equal content gives equal text whatever the key order. */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonical(x)}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** Every desired slot of a shape, by slot name (indexes 0…count-1 per group). */
export function expandShape(shape: FleetShape): Map<string, DesiredSlot> {
  const out = new Map<string, DesiredSlot>();
  for (const g of shape.groups) {
    const template: SlotTemplate = g.bootstrap ? { role: g.role, vm: g.vm, bootstrap: g.bootstrap } : { role: g.role, vm: g.vm };
    const key = canonical(template);
    for (let i = 0; i < g.count; i++) {
      const slot = slotName(shape.name, g.id, i);
      out.set(slot, { slot, group: g.id, index: i, template, key, ...(g.onK8sFailure ? { onK8sFailure: g.onK8sFailure } : {}) });
    }
  }
  return out;
}

const finiteNonNeg = (n: unknown): boolean => typeof n === 'number' && Number.isFinite(n) && n >= 0;

/** Invariants beyond types (also checked by the workflow, which cannot use zod). Empty = valid. */
export function shapeProblems(shape: FleetShape): string[] {
  const p: string[] = [];
  if (typeof shape.name !== 'string' || !NAME_RE.test(shape.name))
    p.push(`name "${String(shape.name)}" must start with a letter, use a-z, 0-9 and inner "-", at most 19 characters`);
  if (!Number.isSafeInteger(shape.generation) || shape.generation < 0) p.push('generation must be a non-negative integer');
  if (!Array.isArray(shape.groups)) return [...p, 'groups must be a list'];
  const seen = new Set<string>();
  for (const g of shape.groups) {
    const at = `group "${String(g.id)}"`;
    if (typeof g.id !== 'string' || !GROUP_RE.test(g.id))
      p.push(`${at}: id must start with a letter, use a-z and 0-9 (no "-": it separates slot names), at most 8 characters`);
    if (seen.has(g.id)) p.push(`${at}: duplicate group id`);
    seen.add(g.id);
    if (!Number.isSafeInteger(g.count) || g.count < 0 || g.count > MAX_COUNT) p.push(`${at}: count must be an integer 0-${MAX_COUNT}`);
    if (typeof g.role !== 'string' || g.role.trim() === '') p.push(`${at}: role must be a non-empty string`);
    if (g.onK8sFailure !== undefined && g.onK8sFailure !== 'teardown' && g.onK8sFailure !== 'keep') p.push(`${at}: onK8sFailure must be "teardown" or "keep"`);
    if (typeof g.vm !== 'object' || g.vm === null) p.push(`${at}: vm options missing`);
    else {
      if (g.vm.maxPricePerHour !== undefined && !finiteNonNeg(g.vm.maxPricePerHour)) p.push(`${at}: vm.maxPricePerHour must be finite and >= 0`);
      if (g.vm.ttlMs !== undefined && !finiteNonNeg(g.vm.ttlMs)) p.push(`${at}: vm.ttlMs must be finite and >= 0`);
      if (g.vm.gpu !== undefined && !(Number.isSafeInteger(g.vm.gpu.count) && g.vm.gpu.count > 0)) p.push(`${at}: vm.gpu.count must be a positive integer`);
      if (g.vm.spot !== undefined && g.vm.spot !== 'only' && g.vm.spot !== 'auto') p.push(`${at}: vm.spot must be "only" or "auto"`);
      // Each slot would buy a block of its own: buy one with `start --capacity-block`, then name its reservation.
      if (g.vm.reserved?.kind === 'capacity-block')
        p.push(`${at}: vm.reserved cannot buy a capacity block in a fleet (each slot would buy one); buy it once, then use { kind: reservation, id: ID }`);
    }
    const b = g.bootstrap;
    if (b) {
      if (!(typeof b.timeout === 'number' && Number.isFinite(b.timeout) && b.timeout > 0)) p.push(`${at}: bootstrap.timeout must be finite seconds > 0`);
      if (b.portBase !== undefined && !(Number.isSafeInteger(b.portBase) && b.portBase > 0 && b.portBase + g.count <= 65_536))
        p.push(`${at}: bootstrap.portBase + count must stay within 1-65535`);
      if (typeof b.start !== 'string' || b.start.trim() === '') p.push(`${at}: bootstrap.start must be a command`);
      const port = 'http' in b.ready ? b.ready.http.port : 'tcp' in b.ready ? b.ready.tcp.port : undefined;
      if (port !== undefined && !(Number.isSafeInteger(port) && port > 0 && port < 65_536)) p.push(`${at}: ready port must be 1-65535`);
      if (('http' in b.ready || 'tcp' in b.ready) && port === undefined && b.portBase === undefined)
        p.push(`${at}: ready http/tcp needs a port or bootstrap.portBase`);
      if (b.env) for (const k of Object.keys(b.env)) if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) p.push(`${at}: env name "${k}" is not a shell variable name`);
    }
  }
  return p;
}

export type RevisionVerdict = { ok: true; changed: boolean } | { ok: false; reason: string };

/**
 * The revision contract: the name is fixed; content changes need a strictly greater generation;
 * the same generation with different content is rejected; an older generation is rejected.
 */
export function checkRevision(current: FleetShape, next: FleetShape): RevisionVerdict {
  if (next.name !== current.name) return { ok: false, reason: `fleet name is fixed: "${current.name}", got "${next.name}"` };
  const same = canonical(current) === canonical(next);
  if (next.generation < current.generation) return { ok: false, reason: `generation regressed: ${next.generation} < ${current.generation}` };
  if (next.generation === current.generation) {
    return same ? { ok: true, changed: false } : { ok: false, reason: `shape changed without a new generation (still ${current.generation})` };
  }
  return { ok: true, changed: true };
}

/** Default directory of a node's bootstrap files, relative to the login home. */
export const DEFAULT_REMOTE_DIR = '.gpuprov/bootstrap';
/** The node's bootstrap directory (relative = under the login home). */
export const nodeDir = (b: Pick<BootstrapSpec, 'dir'>, node: string): string => `${(b.dir ?? DEFAULT_REMOTE_DIR).replace(/\/+$/, '')}/${node}`;
/** The node's annotated log (`<stream> <seq> <time> <line>`). */
export const nodeLogPath = (b: Pick<BootstrapSpec, 'dir'>, node: string): string => `${nodeDir(b, node)}/log`;
