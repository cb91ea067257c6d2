/**
 * What the activity factory (`createActivities`, src/activities/index.ts) is built from: the
 * registry of clouds, the worker's SSH identity and deployment, and test hooks.
 */
import type { WatcherTuning } from '../core/watcher-api';
import type { ProviderRegistry } from '../providers/registry';
import type { SshIdentity, SshProber } from '../ssh';

export interface ActivityDeps {
  registry: ProviderRegistry;
  /** The worker's SSH identity (its public key is added to every instance). */
  ssh: SshIdentity;
  /** The owning deployment (GPUPROV_DEPLOYMENT, else the namespace): every spec's owner, as the registry's adapters were built with it. */
  owner: string;
  /** SSH probe; tests of the in-memory FakeProvider pass their own. */
  prober?: SshProber;
  /** Clock, for tests. */
  now?: () => number;
  /**
   * How long one boot-wait or SSH-probe attempt keeps looking by itself (default INLINE_WINDOW_MS);
   * 0: every look is its own activity attempt (the bench compares schedules that way).
   */
  inlineWindowMs?: number;
  /** Timings of the account watchers this worker starts (GPUPROV_ORPHAN_GRACE sets the orphan grace). */
  watcher?: Partial<WatcherTuning>;
  /** How long an offer that answered Capacity is tried last (ms; 0: off). Default: `GPUPROV_CAPACITY_MEMORY` or 3 minutes. */
  capacityMemoryMs?: number;
}
