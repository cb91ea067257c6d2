/**
 * A slot whose VM was torn down for its budget is held, not replaced (a replacement would spend the
 * budget again, in a loop), until its template changes; any other end is replaced as before.
 */
import { describe, expect, it } from 'vitest';
import { eventOfChild } from '../../../../src/core/fleet/child-events';
import { reconcile } from '../../../../src/core/fleet/reconcile';
import { applyAction, emptyState, fold, type FleetEvent, type FleetState } from '../../../../src/core/fleet/state';
import { expandShape, type FleetShape } from '../../../../src/core/fleet/types';
import { T } from './fixtures';

const SLOT = 'f-gpu-0';
const fleet = (budgetUsd: number, generation = 1): FleetShape => ({
  name: 'f',
  generation,
  groups: [{ id: 'gpu', role: 'gpu', count: 1, vm: { budgetUsd } }],
});

/** Every action of each pass, folded with its effect's outcome: `startVm` starts and ends as `end` says. */
function run(s: FleetState, shape: FleetShape, end: (attempt: number) => FleetEvent | undefined, now: number): { s: FleetState; started: number[] } {
  const d = expandShape(shape);
  const started: number[] = [];
  for (let i = 0; i < 40; i++) {
    const p = reconcile(s, d, now);
    if (p.actions.length === 0) break;
    for (const a of p.actions) {
      s = applyAction(s, a, d, now, T);
      if (a.kind === 'startVm') {
        started.push(a.attempt);
        s = fold(s, { type: 'vmStarted', slot: SLOT, attempt: a.attempt }, now, T);
        const e = end(a.attempt);
        if (e) s = fold(s, e, now, T);
      }
    }
    now += 60_000; // past any restart backoff
  }
  return { s, started };
}

/** A child's reported end, taken as its close too (the tests fold no separate completion). */
const closedEnd = (e: FleetEvent | undefined): FleetEvent => ({ ...(e as Extract<FleetEvent, { type: 'vmEnded' }>), closed: true });
const budgetEnd = (attempt: number): FleetEvent => closedEnd(eventOfChild({ workflowId: `vm-${SLOT}-a${attempt}`, stage: 'terminated', budgetReached: true }));
const plainEnd = (attempt: number): FleetEvent => closedEnd(eventOfChild({ workflowId: `vm-${SLOT}-a${attempt}`, stage: 'terminated' }));

describe('budget hold', () => {
  it('the child says its budget was reached; the fleet records why', () => {
    expect(budgetEnd(1)).toEqual({
      type: 'vmEnded',
      slot: SLOT,
      attempt: 1,
      outcome: 'terminated',
      reason: 'its spend reached the budget',
      budgetReached: true,
      closed: true,
    });
  });

  it('a slot ended by its budget is destroyed and held: no restart time, no new attempt', () => {
    const { s, started } = run(emptyState('f'), fleet(2), budgetEnd, 0);
    expect(started).toEqual([1]);
    expect(s.slots[SLOT]).toMatchObject({ stage: 'destroyed', budgetSpent: true, failedReason: 'VM terminated: its spend reached the budget' });
    expect(s.slots[SLOT]?.restartAt).toBeUndefined();
  });

  it('any other end is replaced (after the backoff) as before', () => {
    const { started } = run(emptyState('f'), fleet(2), (a) => (a < 3 ? plainEnd(a) : undefined), 0);
    expect(started).toEqual([1, 2, 3]);
  });

  it('a changed template (a new budget) starts a fresh attempt, which is not held', () => {
    const held = run(emptyState('f'), fleet(2), budgetEnd, 0).s;
    const { s, started } = run(held, fleet(5, 2), () => undefined, 1_000_000);
    expect(started).toEqual([2]);
    expect(s.slots[SLOT]?.budgetSpent).toBeUndefined();
  });
});
