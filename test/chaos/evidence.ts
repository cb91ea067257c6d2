/** What the chaos kit collects from a trace, and what the oracle returns (types only). */
import type { Trace } from './trace';
import type { RunFacts } from './history';

/** One instance as the cloud shows it. */
export interface CloudInstance {
  id: string;
  vmName: string;
  region: string;
  instanceType: string;
  port?: number;
  /** The deployment that owns it (its owner tag / label). */
  owner?: string;
  /** The cloud announced its reclaim (a spot preemption; fake only). */
  preempted?: boolean;
  /** false: stopped by its preemption (listed until deleted, no longer billed). Absent: billed. */
  billed?: boolean;
}

/** One look at a VM while the trace ran: its status query (when it answered) and the cloud. */
export interface Sample {
  t: number;
  vm: string;
  runId?: string;
  stage?: string;
  instanceIds?: string[];
  region?: string;
  endpointPort?: number;
  /** No signal, vanish or kill of this VM was in flight: the VM should be stable when ready. */
  quiet: boolean;
  /** The VM's live instances right after the query. */
  live: CloudInstance[];
  /** `GpuprovStage` from describe (only taken on quiet ready samples). */
  describedStage?: string;
}

/** One FakeProvider call, in order (fake level only). */
export interface CloudCall {
  primitive: string;
  vmName?: string;
  region?: string;
  instanceType?: string;
  error?: string;
  /** The calling adapter's deployment. */
  deployment?: string;
  /** Deployments whose instances or side resources the call returned or removed. */
  owners?: string[];
  /** delete: the instances it removed at the cloud, with their owners. */
  removed?: { id: string; owner?: string }[];
  /** When the cloud recorded it (epoch ms; the kit's clock, same machine). */
  at?: number;
  /** create: the instance it made. */
  id?: string;
}

/** One preemption the kit played (fake level), keyed by the VM's evidence key. */
export interface PreemptionPlayed {
  /** The instance the cloud reclaims. */
  id: string;
  /** Trace time (ms since the trace started, the samples' clock) of the notice. */
  t: number;
  /** Epoch ms of the notice, and of the reclaim (the instance stops: no longer billed). */
  noticeAt: number;
  reclaimAt: number;
  /** The notice the cloud gave (0: none, it stopped at once). */
  noticeMs: number;
  /** The VM runs with `--recover`. */
  recover: boolean;
}

export interface Evidence {
  trace: Trace;
  mutateMaxAttempts: number;
  runs: RunFacts[];
  samples: Sample[];
  /** Fake level: the cloud's call log for this trace's VMs. */
  calls?: CloudCall[];
  /** Every instance id ever seen per VM name. */
  everSeen: Record<string, string[]>;
  /** Instances of this trace's VMs left after convergence and the final teardown. */
  finalLive: CloudInstance[];
  /** Side resources (`vm@region`) left after convergence. */
  finalSideResources: string[];
  /** VMs or runs that did not reach Ready or a terminal state in time. */
  unconverged: string[];
  /** Runs whose workflow had closed while the cloud still held an instance of the VM. */
  closedWhileHolding: string[];
  /** Starts of an already-running name that the server accepted. */
  duplicateStartsAccepted: string[];
  /** VM names whose instance the harness made vanish. */
  vanished: string[];
  /** When each one vanished (epoch ms). */
  vanishedAt?: Record<string, number>;
  /** Instance ids the harness made vanish (all VMs), with when (epoch ms): they stop being billed then. */
  vanishedIds?: Record<string, number>;
  /** The spot preemptions the kit played (fake level), per VM key. */
  preempted?: Record<string, PreemptionPlayed>;
  /** The account watchers' timings in force (CHAOS_WATCHER). */
  /** `readyIntervalMs`: the cycle while VMs are only Ready (absent in evidence from before it existed: the fast one). */
  watcher?: { fastIntervalMs: number; readyIntervalMs?: number; orphanGraceMs: number };
  /**
   * Instances of the trace's VMs live when its last workflow closed (terminated ones leave
   * orphans), and those still live after the orphan grace plus one watcher cycle and an allowance.
   */
  orphans?: { atClose: CloudInstance[]; left: CloudInstance[]; waitedMs: number };
  /** Worker SIGKILLs and server restarts during the trace (they can time activities out). */
  disruptions: number;
  replayErrors: Record<string, string>;
  secrets: Record<string, string[]>;
}

export interface Violation {
  invariant: string;
  vm?: string;
  detail: string;
}

export interface Invariant {
  id: string;
  /** The guarantee, in one sentence (docs/ARCHITECTURE.md, "What the chaos oracle checks"). */
  says: string;
  check(ev: Evidence): Violation[];
}
