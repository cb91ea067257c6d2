/**
 * The VM's live state inside a workflow: the status snapshot, stage changes (mirrored to search
 * attributes and the Web UI's current details), and the user's cancel/teardown requests.
 */
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import { CancellationScope, setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { locationOf, offerKey } from '../core/offers';
import type { Offer } from '../core/provider';
import { API_VERSION, type Stage, type VmSpec, type VmStatus } from '../core/api';
import { recoveryLine, replacementSpec, retiringLine } from '../core/recovery';
import { reservedLines } from '../core/reserved-window';
import { indexedStage, indexKey, SA, type IndexedVm } from '../core/search-attributes';
import { withTuning, type Tuning } from '../core/tuning';
import { logStage } from './telemetry';

export class VmContext {
  readonly status: VmStatus;
  readonly tuning: Tuning;
  /** Set by the cancel signal or Temporal's own cancellation; checked between activities. */
  cancelRequested = false;
  /** Set when Temporal itself cancelled the workflow (it then ends as Cancelled, not Completed). */
  temporalCancelled = false;
  /** Incremented by every teardown signal (a leaked teardown retries at once on a new one). */
  teardownRequests = 0;
  /** Incremented by the retryK8s signal while the VM is k8s-failed. */
  k8sRetryRequests = 0;
  /** Read-only waits that a cancel may interrupt (never a mutating cloud call). */
  private readonly interruptible = new Set<CancellationScope>();
  /** What the search attributes index now ({@link indexKey}): at first, what the start gave or the previous run carried. */
  private indexed = indexKey(indexedAtStart());

  constructor(spec: VmSpec, tuning?: Partial<Tuning>, carried?: VmStatus) {
    this.tuning = withTuning(tuning);
    this.status = carried ?? {
      apiVersion: API_VERSION,
      name: spec.name,
      stage: 'pending',
      spec,
      instanceIds: [],
      attempts: [],
      createdAt: new Date().toISOString(),
    };
  }

  /** Change stage: status, search attributes (only when they changed) and the UI's details. */
  setStage(stage: Stage, patch: Partial<VmStatus> = {}): void {
    const from = this.status.stage;
    Object.assign(this.status, patch, { stage });
    this.syncAttributes();
    setCurrentDetails(this.details());
    if (stage !== from) logStage(this.status, from);
  }

  /** The spec the launch plans with: a replacement's one attempt at a time, on-demand only when its record says so (src/core/recovery.ts). */
  launchSpec(): VmSpec {
    const s = this.status;
    return replacementSpec(s.spec, { replacing: s.retiring !== undefined, onDemand: s.recovered?.onDemand === true });
  }

  /** Point the VM at an offer (a new attempt) without changing stage. */
  setOffer(offer: Offer | undefined): void {
    if (offer) {
      this.status.offer = offer;
      this.status.location = locationOf(offer);
    }
  }

  requestCancel(fromTemporal = false): void {
    this.cancelRequested = true;
    if (fromTemporal) this.temporalCancelled = true;
    for (const s of this.interruptible) s.cancel();
  }

  /** Run a read-only wait that a cancel request interrupts (its CancelledFailure propagates). */
  async interruptibly<T>(fn: () => Promise<T>): Promise<T> {
    const scope = new CancellationScope({ cancellable: true });
    this.interruptible.add(scope);
    try {
      if (this.cancelRequested) scope.cancel();
      return await scope.run(fn);
    } finally {
      this.interruptible.delete(scope);
    }
  }

  private syncAttributes(): void {
    const s = this.status;
    const want: IndexedVm = { vmName: s.name, stage: indexedStage(s.stage) };
    if (s.offer) Object.assign(want, { cloud: s.offer.cloud, region: s.offer.region, instanceType: s.offer.instanceType });
    else Object.assign(want, indexedAtStart(), { vmName: s.name, stage: want.stage });
    const key = indexKey(want);
    if (key === this.indexed) return;
    this.indexed = key;
    const pairs: SearchAttributeUpdatePair[] = [
      { key: SA.vmName, value: s.name },
      { key: SA.stage, value: want.stage! },
    ];
    if (s.offer) {
      pairs.push({ key: SA.cloud, value: s.offer.cloud }, { key: SA.region, value: s.offer.region }, { key: SA.instanceType, value: s.offer.instanceType });
    }
    upsertSearchAttributes(pairs);
  }

  private details(): string {
    const s = this.status;
    const lines = [`**${s.name}** — stage \`${s.stage}\``];
    if (s.offer) lines.push(`offer: ${offerKey(s.offer)}${s.offer.pricePerHour !== undefined ? ` at $${s.offer.pricePerHour}/h` : ''}`);
    if (s.endpoint) lines.push(`ssh: ${s.endpoint.user ?? ''}${s.endpoint.user ? '@' : ''}${s.endpoint.host}:${s.endpoint.port}`);
    if (s.attempts.length) lines.push(`attempts: ${s.attempts.length}`);
    if (s.leak)
      lines.push(`LEAKED: ${s.leak.instanceIds.join(', ') || '(by identity)'} at ${s.leak.location.cloud}/${s.leak.location.region} — ${s.leak.lastError}`);
    if (s.error) lines.push(`error: ${s.error.kind}: ${s.error.message}`);
    if (s.recovered) lines.push(`recovered: ${recoveryLine(s.recovered)}`);
    if (s.retiring) lines.push(`retiring: ${retiringLine(s.retiring)}`);
    lines.push(...reservedLines(s.reserved, s.stage));
    if (s.budget) lines.push(`budget $${s.budget.usd}${s.budget.reachedAt ? ': REACHED, torn down' : s.budget.warnedAt ? ': 80 % spent' : ''}`);
    lines.push(`run: ${workflowInfo().runId}`);
    return lines.join('\n\n');
  }
}

/** The search attributes this run was started with (or carried from the run it continues). */
function indexedAtStart(): IndexedVm {
  const sa = workflowInfo().typedSearchAttributes;
  const out: IndexedVm = {};
  for (const k of ['vmName', 'stage', 'cloud', 'region', 'instanceType'] as const) {
    const v = sa.get(SA[k]);
    if (v !== undefined) out[k] = v;
  }
  return out;
}
