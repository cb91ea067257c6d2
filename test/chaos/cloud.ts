/**
 * The cloud side of a chaos lane, per level: arm a trace's faults, read what is live, make an
 * instance vanish, preempt a spot instance. `fake`: the FakeProvider's JSON state file shared
 * with the lane's worker process (it sells spot). `local`: the local cloud's root and fault file;
 * what is live is read from the process table (live sshd PIDs), never from the cloud's own
 * bookkeeping; it sells no spot and cannot preempt (`preempt` is absent).
 */
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { liveSshdPids } from '../../src/providers/local';
import { defaultFakeOffers, FakeProvider, type FakeRule } from '../harness/fake-provider';
import type { CloudCall, CloudInstance } from './oracle';
import type { Level, Trace } from './trace';

export interface ChaosCloud {
  level: Level;
  /** Environment of the lane's worker process (see test/harness/worker-main.ts). */
  workerEnv: Record<string, string>;
  /** Fresh cloud state for a trace, with its faults armed (every fault finite). */
  arm(trace: Trace, tag: string): void;
  /** Faults stop: disarm whatever did not fire. */
  clearFaults(): Promise<void>;
  /** Every live instance of this lane's cloud. */
  live(): CloudInstance[];
  /** The cloud's call log (fake only). */
  calls(): CloudCall[] | undefined;
  /** Calls so far (fake only; 0 for local): kill points count activity boundaries with it. */
  callCount(): number;
  /** Side resources left, as `vm@region@owner`. */
  sideResources(): string[];
  /** The instance disappears as if the cloud reclaimed it (fake) / its sshd is SIGKILLed (local). */
  vanish(id: string): Promise<void>;
  /**
   * A spot reclaim of `id` (fake only): with `noticeMs` > 0 a notice and a deadline, the instance
   * running until then; with 0 it stops at once. Epoch ms of the notice and the stop; undefined
   * when the instance is not there.
   */
  preempt?(id: string, noticeMs: number): Promise<{ noticeAt: number; reclaimAt: number } | undefined>;
  /** Remove every live instance (after a trace's evidence was taken). */
  sweep(): void;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class FakeChaosCloud implements ChaosCloud {
  readonly level = 'fake' as const;
  readonly workerEnv: Record<string, string>;
  private readonly stateFile: string;
  private nextId = 1;

  constructor(dir: string) {
    this.stateFile = join(dir, 'fake-state.json');
    this.workerEnv = { GPUPROV_FAKE_STATE: this.stateFile, GPUPROV_FAKE_PROBE: '1', GPUPROV_FAKE_LISTS_SIDES: '1', GPUPROV_SSH_DIR: join(dir, 'keys') };
    this.reset();
  }

  private provider(): FakeProvider {
    return new FakeProvider({ stateFile: this.stateFile });
  }

  private reset(rules: FakeRule[] = [], bootMs = 0): void {
    if (!existsSync(this.stateFile)) {
      // The FakeProvider's state shape.
      const state = { instances: [], deleted: [], rules, calls: [], nextId: 1, bootMs, offers: defaultFakeOffers(), sideResources: [], delays: {} };
      writeFileSync(`${this.stateFile}.arm`, JSON.stringify(state));
      renameSync(`${this.stateFile}.arm`, this.stateFile);
    }
    // Under the state file's lock: the workers (and their watchers) write it too. Ids keep growing.
    this.provider().resetState({ rules, bootMs, offers: defaultFakeOffers() });
  }

  arm(trace: Trace): void {
    const rules: FakeRule[] = trace.faults.map((f) => ({
      primitive: f.primitive,
      error: f.error,
      times: f.times,
      ...(f.region ? { region: f.region } : {}),
      ...(f.instanceType ? { instanceType: f.instanceType } : {}),
      ...(f.ambiguous ? { ambiguous: true } : {}),
    }));
    this.reset(rules, trace.bootMs);
    // It sells spot (spot twins of its offers) to every trace; only `--spot` launches ask for them.
    this.provider().setSpot({});
  }

  async clearFaults(): Promise<void> {
    // The worker writes the same file: re-check and retry if its write raced ours.
    for (let i = 0; i < 20 && this.rulesLeft() > 0; i++) {
      this.provider().clearRules();
      await sleep(30);
    }
  }

  private rulesLeft(): number {
    const s = JSON.parse(readFileSync(this.stateFile, 'utf8')) as { rules: FakeRule[] };
    return s.rules.filter((r) => r.times !== 0).length;
  }

  live(): CloudInstance[] {
    const now = Date.now();
    return this.provider()
      .live()
      .map((i) => ({
        id: i.id,
        vmName: i.vmName,
        region: i.region,
        instanceType: i.instanceType,
        port: i.port,
        ...(i.owner ? { owner: i.owner } : {}),
        ...(i.preemption ? { preempted: true } : {}),
        // The FakeProvider's own rule (`billed`): stopped at its reclaim time.
        ...(i.reclaimAt !== undefined && now >= i.reclaimAt ? { billed: false } : {}),
      }));
  }

  calls(): CloudCall[] {
    return this.provider().calls.map((c) => ({
      primitive: c.primitive,
      ...(c.vmName !== undefined ? { vmName: c.vmName } : {}),
      ...(c.region !== undefined ? { region: c.region } : {}),
      ...(c.instanceType !== undefined ? { instanceType: c.instanceType } : {}),
      ...(c.error !== undefined ? { error: c.error } : {}),
      ...(c.deployment !== undefined ? { deployment: c.deployment } : {}),
      ...(c.owners !== undefined ? { owners: c.owners } : {}),
      ...(c.removed !== undefined ? { removed: c.removed } : {}),
      ...(c.id !== undefined ? { id: c.id } : {}),
      at: c.at,
    }));
  }

  /** The watchers' inventory calls tick with time, not with activities: they do not count. */
  callCount(): number {
    return this.provider().calls.filter((c) => c.primitive !== 'inventory').length;
  }

  sideResources(): string[] {
    return this.provider().sideResources();
  }

  async vanish(id: string): Promise<void> {
    for (let i = 0; i < 20 && this.live().some((x) => x.id === id); i++) {
      this.provider().vanish(id);
      await sleep(30);
    }
  }

  async preempt(id: string, noticeMs: number): Promise<{ noticeAt: number; reclaimAt: number } | undefined> {
    const p = this.provider().preempt(id, noticeMs > 0 ? { noticeMs } : {});
    if (!p) return undefined;
    const noticeAt = Date.parse(p.noticeAt);
    return { noticeAt, reclaimAt: p.deadline ? Date.parse(p.deadline) : noticeAt };
  }

  sweep(): void {
    // The next arm() starts from a fresh state.
  }
}

interface LocalLabels {
  vmName: string;
  region: string;
  instanceType: string;
  owner?: string;
}

/** The local cloud's instance behind a live sshd PID (its config lives in the instance's directory). */
function instanceOfPid(pid: number): (CloudInstance & { pid: number }) | undefined {
  let cmd: string;
  try {
    cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return undefined;
  }
  const m = / -f (\S+)\/sshd_config/.exec(cmd);
  if (!m) return undefined;
  const dir = m[1]!;
  try {
    const labels = JSON.parse(readFileSync(join(dir, 'labels.json'), 'utf8')) as LocalLabels;
    const port = Number(readFileSync(join(dir, 'port'), 'utf8').trim());
    return {
      pid,
      id: basename(dir),
      vmName: labels.vmName,
      region: labels.region,
      instanceType: labels.instanceType,
      ...(port > 0 ? { port } : {}),
      ...(labels.owner ? { owner: labels.owner } : {}),
    };
  } catch {
    // moved to the trash mid-read, or not written yet: look it up there
  }
  const id = basename(dir);
  const trash = join(dirname(dirname(dir)), 'trash');
  const moved = existsSync(trash) ? readdirSync(trash).find((n) => n.startsWith(`${id}.`)) : undefined;
  if (moved) {
    try {
      const labels = JSON.parse(readFileSync(join(trash, moved, 'labels.json'), 'utf8')) as LocalLabels;
      return { pid, id, vmName: labels.vmName, region: labels.region, instanceType: labels.instanceType, ...(labels.owner ? { owner: labels.owner } : {}) };
    } catch {
      // gone meanwhile
    }
  }
  return { pid, id, vmName: '?', region: '?', instanceType: '?' };
}

export class LocalChaosCloud implements ChaosCloud {
  readonly level = 'local' as const;
  readonly workerEnv: Record<string, string>;
  private readonly root: string;
  private readonly faultsFile: string;

  constructor(dir: string) {
    this.root = join(dir, 'cloud');
    this.faultsFile = join(dir, 'faults.json');
    this.workerEnv = { GPUPROV_LOCAL_ROOT: this.root, GPUPROV_LOCAL_FAULTS: this.faultsFile, GPUPROV_SSH_DIR: join(dir, 'keys') };
    this.writeRules([]);
  }

  private writeRules(rules: unknown[]): void {
    writeFileSync(`${this.faultsFile}.tmp`, JSON.stringify({ rules }));
    renameSync(`${this.faultsFile}.tmp`, this.faultsFile);
  }

  arm(trace: Trace, tag: string): void {
    const rules: Record<string, unknown>[] = trace.faults.map((f, i) => ({
      // A fresh id per trace re-arms identical rules (their counters live on disk).
      id: `${trace.seed}${tag}-${i}`,
      primitive: f.primitive,
      error: f.error,
      times: f.times,
      ...(f.region ? { region: f.region } : {}),
      ...(f.instanceType ? { instanceType: f.instanceType } : {}),
      ...(f.ambiguous ? { ambiguousCreate: true } : {}),
    }));
    if (trace.bootMs > 0) rules.push({ id: `${trace.seed}${tag}-boot`, primitive: 'create', bootDelayMs: trace.bootMs });
    this.writeRules(rules);
  }

  async clearFaults(): Promise<void> {
    this.writeRules([]);
  }

  live(): CloudInstance[] {
    return liveSshdPids(this.root)
      .map(instanceOfPid)
      .filter((x): x is CloudInstance & { pid: number } => x !== undefined)
      .map(({ pid: _pid, ...i }) => i);
  }

  calls(): undefined {
    return undefined;
  }

  callCount(): number {
    return 0;
  }

  sideResources(): string[] {
    const vms = join(this.root, 'vms');
    if (!existsSync(vms)) return [];
    // <root>/vms/<region>/<owner>/<vm> (src/providers/local/api.ts vmDir)
    return readdirSync(vms).flatMap((region) =>
      readdirSync(join(vms, region)).flatMap((owner) => readdirSync(join(vms, region, owner)).map((vm) => `${vm}@${region}@${owner}`)),
    );
  }

  async vanish(id: string): Promise<void> {
    for (const pid of liveSshdPids(this.root)) {
      if (instanceOfPid(pid)?.id === id) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
  }

  sweep(): void {
    for (const pid of liveSshdPids(this.root)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    rmSync(join(this.root, 'vms'), { recursive: true, force: true });
  }
}
