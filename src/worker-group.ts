/**
 * The workers of one gpuprov worker process, run and stopped together: the main worker (workflows,
 * SSH, k3s, bootstrap, plan) and one activity-only worker per cloud on that cloud's rate-limited
 * task queue (src/core/rate-limits.ts). `buildWorker` (src/worker.ts) makes it.
 */
import type { State, Worker } from '@temporalio/worker';

export class WorkerGroup {
  private stopRequested = false;

  constructor(
    /** Polls the main task queue. */
    readonly main: Worker,
    /** Polls `<main>-cloud-<cloud>`, by cloud. */
    readonly cloudWorkers: ReadonlyMap<string, Worker>,
  ) {}

  get workers(): Worker[] {
    return [this.main, ...this.cloudWorkers.values()];
  }

  /** INITIALIZED while any worker is; RUNNING once all are; else the first state that is not RUNNING. */
  getState(): State {
    const states = this.workers.map((w) => w.getState());
    if (states.includes('INITIALIZED')) return 'INITIALIZED';
    return states.find((s) => s !== 'RUNNING') ?? 'RUNNING';
  }

  /** Runs every worker; settles when all stopped, rejecting with the first failure (which stops the others). */
  async run(): Promise<void> {
    const runs = this.workers.map((w) =>
      w.run().catch((err: unknown) => {
        this.shutdown();
        throw err;
      }),
    );
    // A worker still starting when the others were told to stop is stopped once it runs.
    while (this.workers.some((w) => w.getState() === 'INITIALIZED')) await new Promise((r) => setTimeout(r, 10));
    if (this.stopRequested) this.shutdown();
    const settled = await Promise.allSettled(runs);
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** Asks every running worker to stop (idempotent). */
  shutdown(): void {
    this.stopRequested = true;
    for (const w of this.workers) if (w.getState() === 'RUNNING') w.shutdown();
  }

  /** Runs the workers until `fn` settles, then stops them and waits for them (a worker's failure wins); like `Worker.runUntil`. */
  async runUntil<R>(fn: Promise<R> | (() => Promise<R>)): Promise<R> {
    const running = this.run();
    running.catch(() => undefined); // awaited below
    try {
      return await (typeof fn === 'function' ? fn() : fn);
    } finally {
      this.shutdown();
      await running;
    }
  }
}
