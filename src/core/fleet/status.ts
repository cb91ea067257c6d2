/**
 * The fleet's status as its queries answer it: a pure snapshot of the folded state, the desired
 * shape and the log (`FleetDriver.status`).
 */
import { API_VERSION } from '../api';
import type { FleetLogEntry, FleetStatus, SlotStatus } from '../fleet-api';
import { isConverged } from './reconcile';
import { attemptWorkflowId, type FleetState } from './state';
import { nodeLogPath, type expandShape, type FleetShape } from './types';

const iso = (ms: number): string => new Date(ms).toISOString();

/** The slots the shape wants, by slot name. */
export type Wanted = ReturnType<typeof expandShape>;

/** The bootstrap log sequence numbers seen so far, without absent keys. */
export function seqsOf(s: { lastStdoutSeq?: number; lastStderrSeq?: number }): { lastStdoutSeq?: number; lastStderrSeq?: number } {
  return {
    ...(s.lastStdoutSeq !== undefined ? { lastStdoutSeq: s.lastStdoutSeq } : {}),
    ...(s.lastStderrSeq !== undefined ? { lastStderrSeq: s.lastStderrSeq } : {}),
  };
}

/** The status a fleet reports for `state` under `desired`. */
export function snapshot(state: FleetState, desired: FleetShape, down: boolean, log: FleetLogEntry[], want: Wanted): FleetStatus {
  const slots: SlotStatus[] = Object.values(state.slots)
    .sort((a, b) => (a.group < b.group ? -1 : a.group > b.group ? 1 : a.index - b.index))
    .map((r) => {
      const b = r.template.bootstrap;
      return {
        slot: r.slot,
        group: r.group,
        index: r.index,
        role: r.template.role,
        attempt: r.attempt,
        workflowId: attemptWorkflowId(r.slot, r.attempt),
        stage: r.stage,
        intent: r.intent,
        ready: r.ready,
        current: want.get(r.slot)?.key === r.key,
        failures: r.failures,
        ...(r.pending ? { pending: r.pending.op } : {}),
        ...(r.restartAt !== undefined && r.stage === 'destroyed' ? { restartAt: iso(r.restartAt) } : {}),
        ...(r.failedReason ? { failedReason: r.failedReason } : {}),
        ...(r.endpoint ? { endpoint: r.endpoint } : {}),
        ...(r.hostKey ? { hostKey: r.hostKey } : {}),
        ...(b
          ? {
              bootstrap: {
                state: r.boot.state,
                logPath: nodeLogPath(b, r.slot),
                ...(r.boot.stage ? { stage: r.boot.stage } : {}),
                ...seqsOf(r.boot),
                ...(r.boot.startedAt !== undefined ? { startedAt: iso(r.boot.startedAt) } : {}),
                ...(r.boot.readyAt !== undefined ? { readyAt: iso(r.boot.readyAt) } : {}),
              },
            }
          : {}),
      };
    });
  return {
    apiVersion: API_VERSION,
    name: desired.name,
    generation: desired.generation,
    observedGeneration: state.observedGeneration,
    converged: !down && isConverged(state, want),
    down,
    slots,
    log: [...log],
  };
}
