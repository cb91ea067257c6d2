/**
 * A chaos lane: its own cloud and, on it, two independent gpuprov installs, each a worker process
 * with its own deployment id (`GPUPROV_DEPLOYMENT`) on its own Temporal server, with its own
 * account watchers (started here with shrunk timings). Both workers are SIGKILLed and restarted at
 * a trace's kill points (the second once it is up); the second starts the first time a trace runs
 * VMs in it. `trace-run.ts` runs one trace at a time.
 */
import type { Client, Connection } from '@temporalio/client';
import { watcherNudgeSignal, type WatcherTuning } from '../../src/core/watcher-api';
import type { Tuning } from '../../src/core/tuning';
import { watcherWorkflowId, type WatcherInput } from '../../src/core/watcher';
import { spawnWorkerProcess, type WorkerProcess } from '../harness/worker-process';
import type { ChaosCloud } from './cloud';
import { GEOGRAPHY } from './trace';

/**
 * Fast timings (the logic is the production one); leaks retry quickly so they resolve within a
 * trace. The per-VM health check is the production's rare backstop: the account watcher notices
 * a vanished instance.
 */
export const CHAOS_TUNING: Partial<Tuning> = {
  mutateMaxAttempts: 3,
  mutateInitialIntervalMs: 100,
  goneDeadlineMs: 5_000,
  leakBackoffMs: 300,
  leakMaxBackoffMs: 1_500,
  healthIntervalMs: 60_000,
  retryUntilUpDelayMs: 1_000,
};

/** The account watchers' timings in every lane (the production logic, shrunk). */
export const CHAOS_WATCHER: Partial<WatcherTuning> = {
  fastIntervalMs: 500,
  readyIntervalMs: 500,
  slowIntervalMs: 2_000,
  orphanGraceMs: 3_000,
  quietWindowMs: 5_000,
};

/** What the lane needs from the kit: the server connection and the disruption counters. */
export interface KitContext {
  client: Client;
  connection: Connection;
  address: string;
  namespace: string;
  /** Dev server restarts so far (they disrupt every lane). */
  serverRestarts(): number;
  /** Extra environment of every lane's worker (the broken build's bundle). */
  workerEnv: Record<string, string>;
  log(line: string): void;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** One deployment's worker process, restarted when it dies on its own. */
class DeploymentWorker {
  worker?: WorkerProcess;
  restarts = 0;
  private respawn?: Promise<void>;
  stopped = false;
  killing = false;

  constructor(
    private readonly lane: Lane,
    /** The install's own Temporal server. */
    readonly kit: KitContext,
    readonly deployment: string,
    readonly taskQueue: string,
  ) {}

  get busy(): boolean {
    return this.killing || this.respawn !== undefined;
  }

  async start(): Promise<void> {
    const kit = this.kit;
    for (let i = 0; ; i++) {
      try {
        const w = await spawnWorkerProcess({
          address: kit.address,
          namespace: kit.namespace,
          taskQueue: this.taskQueue,
          env: { ...this.lane.cloud.workerEnv, ...kit.workerEnv, GPUPROV_DEPLOYMENT: this.deployment },
          readyTimeoutMs: 120_000,
        });
        this.worker = w;
        w.child.once('exit', () => {
          if (this.stopped || this.killing || this.worker !== w) return;
          kit.log(`lane ${this.lane.id}: worker of ${this.deployment} exited on its own; restarting`);
          this.restarts += 1;
          this.respawn = this.start().finally(() => (this.respawn = undefined));
        });
        await this.startWatchers();
        return;
      } catch (err) {
        if (i >= 10) throw err;
        await sleep(2_000);
      }
    }
  }

  /**
   * Start (or nudge) this deployment's watchers with the chaos timings, before any VM's
   * `ensureWatcher` (which then only nudges). A nudge after a worker restart makes the watcher
   * look again at once instead of waiting for its cycle's heartbeat timeout.
   */
  async startWatchers(): Promise<void> {
    const { client, connection } = this.kit;
    const level = this.lane.cloud.level;
    for (const region of GEOGRAPHY[level].regions) {
      const input: WatcherInput = { deployment: this.deployment, cloud: level, region, tuning: CHAOS_WATCHER };
      for (let i = 0; i < 20; i++) {
        try {
          await connection.withDeadline(Date.now() + 5_000, () =>
            client.workflow.signalWithStart('accountWatcherWorkflow', {
              workflowId: watcherWorkflowId(this.deployment, level, region),
              taskQueue: this.taskQueue,
              args: [input],
              signal: watcherNudgeSignal,
              signalArgs: [],
            }),
          );
          break;
        } catch {
          await sleep(1_000); // the dev server restarting
        }
      }
    }
  }

  async kill(): Promise<boolean> {
    if (!this.worker || this.killing) return false;
    this.killing = true;
    try {
      await this.worker.kill('SIGKILL');
      await this.start();
      this.restarts += 1;
      return true;
    } finally {
      this.killing = false;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.respawn?.catch(() => undefined);
    await this.worker?.stop();
  }
}

export class Lane {
  kills = 0;
  /** Install 0 (on the kit's first server) and install 1 (on the second server, started on demand). */
  readonly deployments: [DeploymentWorker, DeploymentWorker];
  private secondUp?: Promise<void>;
  private secondStarted = false;

  constructor(
    readonly id: number,
    readonly cloud: ChaosCloud,
    readonly kit: KitContext,
    readonly secondKit: KitContext,
    runTag: string,
  ) {
    const dep = `chaos-${runTag}-${id}`;
    this.deployments = [
      new DeploymentWorker(this, kit, dep, `chaos-${runTag}-${id}`),
      new DeploymentWorker(this, secondKit, `${dep}-b`, `chaos-${runTag}-${id}-b`),
    ];
  }

  get taskQueue(): string {
    return this.deployments[0].taskQueue;
  }

  get restarts(): number {
    return this.deployments[0].restarts + this.deployments[1].restarts;
  }

  get busy(): boolean {
    return this.deployments.some((d) => d.busy);
  }

  /** The VM name's key in the evidence: the second deployment's VMs carry `/b` (their names overlap the first's). */
  keyOf(vmName: string, owner: string | undefined): string {
    return owner === this.deployments[1].deployment ? `${vmName}/b` : vmName;
  }

  /** Spawn the first deployment's worker, retrying while the dev server is down (a server restart). */
  async start(): Promise<void> {
    await this.deployments[0].start();
  }

  /** The second deployment's worker (spawned once, on the first trace that needs it). */
  async second(): Promise<void> {
    this.secondUp ??= this.deployments[1].start().then(() => {
      this.secondStarted = true;
    });
    return this.secondUp;
  }

  /** SIGKILL the installs' workers (the second's once it is up), then start new ones. */
  async kill(): Promise<void> {
    const killed = await Promise.all([this.deployments[0].kill(), this.secondStarted ? this.deployments[1].kill() : Promise.resolve(false)]);
    this.kills += killed.filter(Boolean).length;
  }

  async stop(): Promise<void> {
    await Promise.all(this.deployments.map((d) => d.stop()));
  }
}
