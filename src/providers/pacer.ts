/**
 * Per-cloud pacing of vendor calls inside one worker process. The cloud task queue's limit
 * (src/core/rate-limits.ts) is enforced by the Temporal server for all hosts together, but as a
 * token bucket per queue partition: a queue that was idle may start a second's burst above the rate.
 * The pacer spaces this process's calls to each cloud `1 / rate` apart, so no second of this host's
 * calls exceeds the rate, and it also covers the one cloud call outside the cloud queues (`plan`,
 * and the quota pre-check, on the main queue).
 */
import type { CloudProvider } from '../core/provider';

/** Slots `1000 / perSecond` ms apart, handed out in call order; never a burst. */
export class CallPacer {
  private nextFreeMs = 0;
  private readonly spacingMs: number;

  constructor(
    readonly perSecond: number,
    private readonly now: () => number = Date.now,
  ) {
    this.spacingMs = 1000 / perSecond;
  }

  /** Resolves at this call's slot. */
  take(): Promise<void> {
    const t = this.now();
    const slot = Math.max(t, this.nextFreeMs);
    this.nextFreeMs = slot + this.spacingMs;
    const waitMs = slot - t;
    return waitMs <= 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, waitMs));
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
      if (typeof v !== 'function' || LOCAL_MEMBERS.has(key)) return v;
      const fn = v as (...args: unknown[]) => unknown;
      return async (...args: unknown[]) => {
        await pacer.take();
        return fn.apply(target, args);
      };
    },
  });
}
