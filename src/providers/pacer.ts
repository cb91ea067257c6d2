/**
 * Per-cloud pacing of vendor calls inside one worker process. The cloud task queue's limit
 * (src/core/rate-limits.ts) is enforced by the Temporal server for all hosts together, but as a
 * token bucket per queue partition: a queue that was idle may start a second's burst above the rate.
 * The pacer spaces this process's calls to each cloud `1 / rate` apart, so no second of this host's
 * calls exceeds the rate, and it also covers the one cloud call outside the cloud queues (`plan`,
 * and the quota pre-check, on the main queue).
 */
import type { CloudProvider } from '../core/provider';

/**
 * Lets callers through one at a time, at least `1000 / perSecond` ms apart, in call order; never a
 * burst. The gap is measured when each caller is let through, so a stalled event loop delays the
 * queue rather than releasing it all at once when it wakes.
 */
export class CallPacer {
  private readonly waiting: (() => void)[] = [];
  private lastMs = -Infinity;
  private draining = false;
  private readonly spacingMs: number;

  constructor(
    readonly perSecond: number,
    private readonly now: () => number = Date.now,
  ) {
    this.spacingMs = 1000 / perSecond;
  }

  /** Resolves when this caller may call. */
  take(): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      if (!this.draining) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.waiting.length > 0) {
        const waitMs = this.lastMs + this.spacingMs - this.now();
        if (waitMs > 0) {
          await new Promise((r) => setTimeout(r, waitMs));
          continue;
        }
        this.lastMs = this.now();
        this.waiting.shift()!();
      }
    } finally {
      this.draining = false;
    }
  }
}

/** The contract's methods that answer without calling the vendor. */
const LOCAL_MEMBERS: ReadonlySet<PropertyKey> = new Set<PropertyKey>(['name', 'capabilities']);

/**
 * `provider` with every vendor call (each contract method but `capabilities`) waiting for its slot
 * of `pacer` first. One contract call may make a few vendor requests (`prepare`, `create`): the
 * default rates sit below the vendors' documented limits for that reason.
 */
export function pacedProvider<P extends CloudProvider>(provider: P, pacer: CallPacer): P {
  return new Proxy(provider, {
    get(target, key, receiver) {
      const v: unknown = Reflect.get(target, key, receiver);
      if (typeof v !== 'function') return v;
      const fn = v as (...args: unknown[]) => unknown;
      // Bound to the adapter: a local member calling another method must not take a slot through the proxy.
      if (LOCAL_MEMBERS.has(key)) return fn.bind(target);
      return async (...args: unknown[]) => {
        await pacer.take();
        return fn.apply(target, args);
      };
    },
  });
}
