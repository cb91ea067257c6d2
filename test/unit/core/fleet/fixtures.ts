/** Shapes and slot records for the pure fleet tests. */
import { withFleetTuning } from '../../../../src/core/fleet/backoff';
import type { SlotRecord } from '../../../../src/core/fleet/state';
import { canonical, expandShape, type DesiredSlot, type FleetShape, type SlotTemplate } from '../../../../src/core/fleet/types';

export const T = withFleetTuning({ backoffBaseMs: 1_000, backoffCapMs: 60_000 });

export function shape(gen: number, counts: Record<string, number>, image = 'v1', name = 'f'): FleetShape {
  return {
    name,
    generation: gen,
    groups: Object.entries(counts).map(([id, count]) => ({ id, role: id, count, vm: { regions: [image] } })),
  };
}

export function desiredOf(s: FleetShape): Map<string, DesiredSlot> {
  return expandShape(s);
}

const template: SlotTemplate = { role: 'web', vm: { regions: ['v1'] } };

/** A record of slot `f-web-<index>`, attempt 1, by default a ready VM without bootstrap. */
export function rec(p: Partial<SlotRecord> = {}): SlotRecord {
  const index = p.index ?? 0;
  return {
    slot: `f-web-${index}`,
    group: 'web',
    index,
    attempt: 1,
    template,
    key: canonical(template),
    intent: 'active',
    stage: 'ready',
    vm: 'up',
    boot: { state: 'none', started: false },
    failures: 0,
    cleanupTries: 0,
    ready: true,
    ...p,
  };
}

export function want(index = 0, image = 'v1'): DesiredSlot {
  const t: SlotTemplate = { role: 'web', vm: { regions: [image] } };
  return { slot: `f-web-${index}`, group: 'web', index, template: t, key: canonical(t) };
}
