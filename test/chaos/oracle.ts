/**
 * The oracle: black-box guarantees (docs/ARCHITECTURE.md, "What the chaos oracle checks"), checked on what a trace left behind — the
 * workflow histories, the status/stage samples taken while it ran, and the cloud itself (the
 * FakeProvider's call log and instances, or live sshd PIDs of the local cloud). Pure: evidence in,
 * violations out.
 */
import { offerKey } from '../../src/core/offers';
import type { VmStatus } from '../../src/core/api';
import type { Offer } from '../../src/core/provider';
import type { Evidence, Invariant, Violation } from './evidence';
import { parallelOfVm } from './trace';
import { SEARCH_INVARIANTS } from './invariants-search';
import { WATCHER_INVARIANTS } from './invariants-watcher';
import { SPOT_INVARIANTS } from './invariants-spot';
import type { Fact } from './history';
import {
  activitiesBetween,
  attemptsOf,
  cancelPoint,
  closeOf,
  completed,
  CREATES,
  finalAttempts,
  injectedKinds,
  isFullRelease,
  isRetiring,
  lastStageBefore,
  laneOfAt,
  perRun,
  regionOfAt,
  TEARDOWN,
  v,
  ATTEMPT_START,
} from './runs';

export type { CloudCall, CloudInstance, Evidence, Invariant, Sample, Violation } from './evidence';

// ---- the invariants -----------------------------------------------------------

export const INVARIANTS: Invariant[] = [
  {
    id: 'no-leak-after-convergence',
    says: 'once faults stop and every VM is torn down, no instance of any VM is left (live sshd PIDs for local)',
    check: (ev) => ev.finalLive.map((i) => v('no-leak-after-convergence', i.vmName, `instance ${i.id} in ${i.region} still live`)),
  },
  {
    id: 'at-most-n-live-per-name',
    says: 'at most N live instances per VM name at any time, N its --parallel (default 1): a slot frees only once its attempt is compensated (a preempted one retiring beside its replacement: billed-per-name)',
    check: (ev) =>
      ev.samples
        .filter((s) => s.live.filter((i) => !i.preempted).length > parallelOfVm(ev.trace, s.vm))
        .slice(0, 3)
        .map((s) =>
          v(
            'at-most-n-live-per-name',
            s.vm,
            `${s.live.filter((i) => !i.preempted).length} live, --parallel ${parallelOfVm(ev.trace, s.vm)}: ${s.live.map((i) => `${i.id}@${i.region}`).join(', ')} (stage ${s.stage ?? '?'})`,
          ),
        ),
  },
  {
    id: 'one-create-per-attempt',
    says: 'never two instances for one attempt: creates at the cloud never outnumber the create activities (ambiguous outcomes are adopted)',
    check: (ev) => {
      const out: Violation[] = [];
      const scheduled = new Map<string, number>();
      for (const run of ev.runs) {
        for (const f of run.facts) {
          if (f.e === 'activity' && CREATES.has(f.type)) {
            const o = f.input[0] as Offer;
            const k = `${run.vmName}|${o.region}|${o.instanceType}`;
            scheduled.set(k, (scheduled.get(k) ?? 0) + 1);
          }
        }
      }
      const perVm = new Map<string, number>();
      for (const [k, n] of scheduled) perVm.set(k.split('|')[0]!, (perVm.get(k.split('|')[0]!) ?? 0) + n);
      if (ev.calls) {
        const made = new Map<string, number>();
        for (const c of ev.calls)
          if (c.primitive === 'create' && !c.error)
            made.set(`${c.vmName}|${c.region}|${c.instanceType}`, (made.get(`${c.vmName}|${c.region}|${c.instanceType}`) ?? 0) + 1);
        for (const [k, n] of made)
          if (n > (scheduled.get(k) ?? 0))
            out.push(v('one-create-per-attempt', k.split('|')[0], `${n} instances created at ${k} for ${scheduled.get(k) ?? 0} create activities`));
      }
      for (const [vm, ids] of Object.entries(ev.everSeen)) {
        if (ids.length > (perVm.get(vm) ?? 0))
          out.push(v('one-create-per-attempt', vm, `${ids.length} distinct instances seen (${ids.join(', ')}) for ${perVm.get(vm) ?? 0} create activities`));
      }
      return out;
    },
  },
  {
    id: 'abandoned-attempts-deleted',
    says: 'every attempt that may have created something is torn down (delete + await gone at its location) before the next offer in its lane or the end',
    check: perRun((run, ev) => {
      const out: string[] = [];
      for (const a of attemptsOf(run, parallelOfVm(ev.trace, run.vmName))) {
        // Released by the create activity itself: the cloud-side invariants (no leak, one create per attempt) judge it.
        if (!a.createScheduled || !a.record || a.record.outcome === 'ready' || a.record.kind === 'Unavailable' || a.released) continue;
        const acts = activitiesBetween(run, a.at, a.until);
        const here = (x: Extract<Fact, { e: 'activity' }>): boolean => regionOfAt(x) === a.offer.region && completed(run, x.id);
        const del = acts.find((x) => isFullRelease(x) && here(x));
        const gone = acts.find((x) => isFullRelease(x) && here(x));
        if (!del || !gone)
          out.push(
            `attempt ${offerKey(a.offer)} (${a.record.kind ?? '?'} at ${a.record.phase ?? '?'}) moved on without ${!del ? 'a completed delete' : 'a completed await-gone'}`,
          );
      }
      return out;
    }, 'abandoned-attempts-deleted'),
  },
  {
    id: 'no-create-after-quota',
    says: 'after a Quota error in a region, the launch creates nothing more in that region',
    check: perRun((run) => {
      const out: string[] = [];
      const blocked = new Set<string>();
      for (const a of attemptsOf(run)) {
        const key = `${a.offer.cloud}/${a.offer.region}`;
        if (blocked.has(key)) out.push(`attempt at ${offerKey(a.offer)} after Quota in ${key}`);
        if (a.record?.kind === 'Quota') blocked.add(key);
      }
      return out;
    }, 'no-create-after-quota'),
  },
  {
    id: 'blocked-offer-not-retried',
    says: 'an offer that failed is blocked: never attempted twice in one search',
    check: perRun((run) => {
      const seen = new Set<string>();
      const out: string[] = [];
      for (const a of attemptsOf(run)) {
        const k = offerKey(a.offer);
        if (seen.has(k)) out.push(`offer ${k} attempted twice`);
        seen.add(k);
      }
      return out;
    }, 'blocked-offer-not-retried'),
  },
  {
    id: 'no-create-after-cancel',
    says: 'after a cancel (signal, Temporal cancel, or `down` while launching) nothing is prepared or created',
    check: perRun((run) => {
      const at = cancelPoint(run);
      if (at === undefined) return [];
      return activitiesBetween(run, at, run.facts.length)
        .filter((a) => ATTEMPT_START.has(a.type) || CREATES.has(a.type))
        .map((a) => `${a.type} scheduled after the cancel`);
    }, 'no-create-after-cancel'),
  },
  {
    id: 'unavailable-never-compensates',
    says: 'Unavailable promises nothing was created: no delete for that attempt',
    check: perRun((run, ev) => {
      const out: string[] = [];
      for (const a of attemptsOf(run, parallelOfVm(ev.trace, run.vmName))) {
        if (a.record?.kind !== 'Unavailable') continue;
        if (activitiesBetween(run, a.at, a.until).some((x) => isFullRelease(x) && regionOfAt(x) === a.offer.region))
          out.push(`delete after Unavailable at ${offerKey(a.offer)}`);
      }
      return out;
    }, 'unavailable-never-compensates'),
  },
  {
    id: 'cleanup-after-gone',
    says: 'side resources are cleaned up only after the instances are gone',
    check: (ev) => {
      const out = perRun((run) => {
        const dirty = new Set<string>();
        const msgs: string[] = [];
        const scheduled = (id: number): Extract<Fact, { e: 'activity' }> | undefined =>
          run.facts.find((x): x is Extract<Fact, { e: 'activity' }> => x.e === 'activity' && x.id === id);
        for (const f of run.facts) {
          // A region is dirty from a create (which may have made an instance, even on error) until a
          // full release there completes. Unavailable promises nothing was created. A full release
          // waits until gone itself, so only its cleanup-only form can come too early.
          if (f.e === 'activity' && CREATES.has(f.type)) dirty.add(regionOfAt(f) ?? '?');
          if (f.e === 'activityFailed' && CREATES.has(scheduled(f.id)?.type ?? '') && (f.failureType === 'Unavailable' || f.prepareStep || f.released))
            dirty.delete(regionOfAt(scheduled(f.id)!) ?? '?');
          if (f.e === 'activityDone') {
            const a = scheduled(f.id);
            if (a && isFullRelease(a)) dirty.delete(regionOfAt(a) ?? '?');
          }
          const cleanupOnly = f.e === 'activity' && f.type === 'releaseAt' && !isFullRelease(f) && !isRetiring(f);
          if (cleanupOnly && dirty.has(regionOfAt(f) ?? '?')) msgs.push(`cleanup in ${regionOfAt(f) ?? '?'} before await-gone completed`);
        }
        return msgs;
      }, 'cleanup-after-gone')(ev);
      if (ev.calls) {
        // The cloud's view: a successful cleanup never comes while a created instance was not yet deleted.
        const pending = new Map<string, number>();
        for (const c of ev.calls) {
          const k = `${c.vmName}|${c.region}`;
          if (c.primitive === 'create' && !c.error) pending.set(k, (pending.get(k) ?? 0) + 1);
          if (c.primitive === 'delete' && !c.error) pending.set(k, 0);
          if (c.primitive === 'cleanup' && !c.error && (pending.get(k) ?? 0) > 0)
            out.push(v('cleanup-after-gone', c.vmName, `cloud: cleanup in ${c.region} while an instance created there was never deleted`));
        }
      }
      return out;
    },
  },
  {
    id: 'status-agrees-with-cloud',
    says: 'the status query agrees with the cloud: a ready VM has exactly its one instance, at its location and endpoint',
    check: (ev) =>
      ev.samples
        .filter((s) => s.quiet && s.stage === 'ready' && !ev.vanished.includes(s.vm))
        .filter(
          (s) =>
            s.live.length !== 1 ||
            s.live[0]!.id !== s.instanceIds?.[0] ||
            s.live[0]!.region !== s.region ||
            (s.live[0]!.port !== undefined && s.endpointPort !== s.live[0]!.port),
        )
        .slice(0, 3)
        .map((s) =>
          v(
            'status-agrees-with-cloud',
            s.vm,
            `status says ready on ${s.instanceIds?.join(',') ?? '?'}@${s.region ?? '?'}:${s.endpointPort ?? '?'}, cloud has ${s.live.map((i) => `${i.id}@${i.region}:${i.port ?? '?'}`).join(', ') || 'nothing'}`,
          ),
        ),
  },
  {
    id: 'stage-attribute-agrees',
    says: 'GpuprovStage agrees with the status query (while ready, and at the end of every run)',
    check: (ev) => [
      ...ev.samples
        .filter((s) => s.describedStage !== undefined && s.describedStage !== s.stage)
        .map((s) => v('stage-attribute-agrees', s.vm, `query says ${s.stage ?? '?'}, GpuprovStage says ${s.describedStage ?? '?'}`)),
      ...perRun((run) => {
        const c = closeOf(run);
        const stages = run.facts.filter((f): f is Extract<Fact, { e: 'stage' }> => f.e === 'stage');
        const last = stages[stages.length - 1]?.stage;
        if (c?.status === 'completed') {
          const want = (c.result as VmStatus | undefined)?.stage;
          return last === want ? [] : [`closed with stage ${want ?? '?'} but GpuprovStage last said ${last ?? 'nothing'}`];
        }
        if (c?.status === 'failed') return last === 'failed' ? [] : [`failed but GpuprovStage last said ${last ?? 'nothing'}`];
        return [];
      }, 'stage-attribute-agrees')(ev),
    ],
  },
  {
    id: 'leak-visible',
    says: 'a teardown that cannot finish shows stage leaked before anything else happens',
    check: perRun((run, ev) => {
      const out: string[] = [];
      const parallel = parallelOfVm(ev.trace, run.vmName);
      run.facts.forEach((f, i) => {
        if (f.e !== 'activityFailed') return;
        const a = run.facts.find((x) => x.e === 'activity' && x.id === f.id) as Extract<Fact, { e: 'activity' }> | undefined;
        if (!a || !TEARDOWN.has(a.type)) return;
        // The next thing that happens (hedged: in the same lane; other attempts' activities interleave).
        const lane = laneOfAt(a, parallel);
        const j = run.facts.findIndex((x, k) => k > i && ((x.e === 'activity' && laneOfAt(x, parallel) === lane) || x.e === 'closed'));
        const end = j < 0 ? run.facts.length : j;
        // The stage in force then (a later pass may fail while already leaked); hedged, another
        // attempt's stage may have followed the `leaked` upsert: the upsert itself is enough.
        const stage = lastStageBefore(run, end);
        const upserted = parallel > 1 && run.facts.slice(i, end).some((x) => x.e === 'stage' && x.stage === 'leaked');
        if (stage !== 'leaked' && !upserted) out.push(`${a.type} failed (${f.failureType}) without stage leaked (stage ${stage ?? '?'})`);
      });
      return out;
    }, 'leak-visible'),
  },
  {
    id: 'leak-resolves',
    says: 'a leaked VM keeps retrying and, once faults stop, leaves stage leaked and ends',
    check: perRun((run) => {
      const stages = run.facts.filter((f): f is Extract<Fact, { e: 'stage' }> => f.e === 'stage').map((f) => f.stage);
      const i = stages.lastIndexOf('leaked');
      // Terminated (Temporal terminate, not a gpuprov end): the account watcher sweeps what is left.
      if (i < 0 || closeOf(run)?.status === 'terminated') return [];
      if (i === stages.length - 1) return ['still leaked at the end'];
      return closeOf(run) ? [] : ['left leaked but never ended'];
    }, 'leak-resolves'),
  },
  {
    id: 'histories-replay',
    says: 'every history replays with the current workflow code',
    check: (ev) =>
      Object.entries(ev.replayErrors).map(([run, err]) => v('histories-replay', ev.runs.find((r) => r.runId === run)?.vmName, `${run.slice(-8)}: ${err}`)),
  },
  {
    id: 'no-secret-in-history',
    says: 'no private key, token or credential in any history',
    check: (ev) =>
      Object.entries(ev.secrets)
        .filter(([, s]) => s.length > 0)
        .map(([run, s]) => v('no-secret-in-history', ev.runs.find((r) => r.runId === run)?.vmName, `${run.slice(-8)}: ${s.join(', ')}`)),
  },
  {
    id: 'converges',
    says: 'once faults stop, every workflow reaches Ready or a terminal state, and ends after teardown',
    check: (ev) => [
      ...ev.unconverged.map((d) => v('converges', undefined, d)),
      ...ev.runs.filter((r) => !closeOf(r)).map((r) => v('converges', r.vmName, `${r.runId.slice(-8)} never closed`)),
    ],
  },
  {
    id: 'terminal-holds-nothing',
    says: 'a VM whose workflow ended holds nothing: no instance at the cloud, no instance ids, no leak in its status',
    check: (ev) => [
      ...ev.closedWhileHolding.map((d) => v('terminal-holds-nothing', undefined, d)),
      ...perRun((run) => {
        const c = closeOf(run);
        const s = c?.status === 'completed' ? (c.result as VmStatus | undefined) : undefined;
        return s && (s.instanceIds.length > 0 || s.leak) ? [`ended ${s.stage} with instanceIds ${s.instanceIds.join(',')}${s.leak ? ' and a leak' : ''}`] : [];
      }, 'terminal-holds-nothing')(ev),
    ],
  },
  {
    id: 'failure-justified',
    says: 'a launch fails, and an attempt records an error kind, only for faults that were injected',
    check: perRun((run, ev) => {
      const out: string[] = [];
      const kinds = injectedKinds(ev.trace);
      const c = closeOf(run);
      for (const a of finalAttempts(run) ?? []) {
        if (a.outcome === 'ready' || a.kind === 'Cancelled') continue;
        const k = a.kind ?? '?';
        const ok = kinds.has(k) || (k === 'BootFailed' && ev.vanished.includes(run.vmName)) || ((k === 'Failed' || k === 'BootFailed') && ev.disruptions > 0);
        if (!ok) out.push(`attempt ${offerKey(a.offer)} failed with ${k} (${a.message ?? ''}) but no such fault was injected`);
      }
      if (c?.status === 'failed') {
        const reason = (c.details as { reason?: string } | undefined)?.reason;
        if (reason === 'fatal' && !kinds.has('Credentials') && !kinds.has('InvalidRequest')) out.push('failed as fatal without a fatal fault');
        if (reason === 'no-offers' && !ev.trace.faults.some((f) => f.primitive === 'plan')) out.push('failed with no offers without a plan fault');
        if (c.failureType !== 'LaunchFailed') out.push(`failed with ${c.failureType ?? '?'}, not LaunchFailed`);
      }
      return out;
    }, 'failure-justified'),
  },
  {
    id: 'action-outcome',
    says: 'cancel ends cancelled, teardown ends terminated (cancelled while launching), a vanished or preempted VM ends lost; nothing ends by itself',
    check: perRun((run, ev) => {
      const c = closeOf(run);
      if (c?.status !== 'completed')
        return c?.status === 'failed' && run.facts.some((f) => f.e === 'signal' && f.name === 'cancel') ? ['failed although cancelled'] : [];
      const stage = (c.result as VmStatus | undefined)?.stage;
      const signals = run.facts.filter((f) => f.e === 'signal');
      const cancelled = cancelPoint(run) !== undefined;
      const allowed = new Set<string>();
      if (cancelled) allowed.add('cancelled');
      else if (signals.some((f) => f.e === 'signal' && f.name === 'teardown')) allowed.add('terminated');
      if (ev.vanished.includes(run.vmName) || ev.preempted?.[run.vmName]) allowed.add('lost');
      return stage !== undefined && allowed.has(stage)
        ? []
        : [`ended ${stage ?? '?'}; allowed: ${[...allowed].join(', ') || 'nothing (no signal, no vanish)'}`];
    }, 'action-outcome'),
  },
  {
    id: 'attempt-records-consistent',
    says: 'the attempts table matches what ran: one record per attempt, every failed attempt compensated, one ready attempt (the last one when serial)',
    check: perRun((run, ev) => {
      const records = finalAttempts(run);
      if (!records) return [];
      const parallel = parallelOfVm(ev.trace, run.vmName);
      const attempts = attemptsOf(run, parallel);
      const out: string[] = [];
      if (records.length !== attempts.length) out.push(`${records.length} records for ${attempts.length} attempts`);
      records.forEach((r, i) => {
        if (r.outcome !== 'ready' && !r.compensated) out.push(`attempt ${i} (${r.outcome}) not compensated`);
        // Hedged: the winner need not have started last (a later attempt lost the race).
        if (r.outcome === 'ready' && i !== records.length - 1 && parallel <= 1) out.push(`ready attempt ${i} is not the last`);
      });
      if (records.filter((r) => r.outcome === 'ready').length > 1) out.push('more than one ready attempt');
      return out;
    }, 'attempt-records-consistent'),
  },
  {
    id: 'ready-instance-stable',
    says: 'a ready VM keeps its instance: no spurious replacement or teardown while nothing happens to it',
    check: (ev) => {
      const out: Violation[] = [];
      const seen = new Map<string, string>();
      for (const s of ev.samples) {
        if (!s.quiet || s.stage !== 'ready' || !s.runId) continue;
        const k = `${s.vm}|${s.runId}`;
        const id = (s.instanceIds ?? []).join(',');
        const before = seen.get(k);
        if (before !== undefined && before !== id) out.push(v('ready-instance-stable', s.vm, `ready instance changed from ${before} to ${id}`));
        seen.set(k, id);
      }
      return out;
    },
  },
  {
    id: 'side-resources-cleaned',
    says: 'per-VM side resources are removed once the VM is gone',
    check: (ev) => ev.finalSideResources.map((r) => v('side-resources-cleaned', r.split('@')[0], `side resource ${r} left`)),
  },
  {
    id: 'duplicate-start-rejected',
    says: 'one workflow per VM name: starting a running name again is rejected',
    check: (ev) => ev.duplicateStartsAccepted.map((d) => v('duplicate-start-rejected', d, 'a second workflow started for a running name')),
  },
  ...SEARCH_INVARIANTS,
  ...WATCHER_INVARIANTS,
  ...SPOT_INVARIANTS,
];

/** Every violation of every invariant on this evidence. */
export function judge(ev: Evidence): Violation[] {
  return INVARIANTS.flatMap((inv) => inv.check(ev));
}
