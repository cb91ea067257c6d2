/**
 * Whether a `start`'s reserved-capacity flags make one valid ask (`VmSpec.reserved`), and the ask
 * they make. Pure; the CLI turns a problem into exit 2 naming the flag, before anything starts.
 *
 * | flags                                                        | answer                                                      |
 * |--------------------------------------------------------------|-------------------------------------------------------------|
 * | none of them                                                 | no ask                                                      |
 * | `--reservation ID`                                           | `{kind: 'reservation', id}`                                 |
 * | `--capacity-block OFFERING --yes --duration D [--count N] [--start-after T]` | `{kind: 'capacity-block', offeringId, query}` |
 * | `--capacity-block` without `--yes`                           | refused (`--yes`): buying is billed at once                 |
 * | `--capacity-block` without `--duration`                      | refused (`--duration`): the offering is found again by its query |
 * | `--duration`, `--count`, `--start-after` without `--capacity-block` | refused (that flag)                                  |
 * | `--queue [--wait D]`                                         | `{kind: 'queue', waitMs: D or DEFAULT_QUEUE_WAIT_MS}`       |
 * | `--wait` without `--queue`                                   | refused (`--wait`)                                          |
 * | two of `--reservation`, `--capacity-block`, `--queue`        | refused (the second): one at a time                         |
 * | any ask with `--spot`                                        | refused (`--spot`): a reservation is its own market         |
 * | any ask with `--parallel` above 1                            | refused (`--parallel`): one reserved launch at a time       |
 * | `--yes` without `--capacity-block`                           | refused (`--yes`): it confirms a purchase only              |
 */
import type { GpuRequest } from './provider';
import type { BlockQuery, ReservedAsk } from './reservation';
import { DEFAULT_QUEUE_WAIT_MS } from './reserved-window';

export interface ReservedFlags {
  reservation?: string;
  capacityBlock?: string;
  yes?: boolean;
  durationHours?: number;
  count?: number;
  startAfter?: string;
  queue?: boolean;
  waitMs?: number;
  /** Other flags the rules read. */
  spot?: boolean;
  parallel?: number;
  gpu?: GpuRequest;
  regions?: string[];
  instanceTypes?: string[];
}

export interface AskProblem {
  flag: string;
  message: string;
  fix: string;
}

type Asked = { ask?: ReservedAsk } | { problem: AskProblem };

/** The block query of `offers --capacity-block` and `start --capacity-block` (the same flags). */
export function blockQueryOf(f: Pick<ReservedFlags, 'durationHours' | 'count' | 'startAfter' | 'gpu' | 'regions' | 'instanceTypes'>): BlockQuery {
  return {
    count: f.count ?? 1,
    durationHours: f.durationHours ?? 24,
    ...(f.startAfter !== undefined ? { startAfter: f.startAfter } : {}),
    ...(f.gpu ? { gpuModel: f.gpu.model, gpuCount: f.gpu.count } : {}),
    ...(f.regions?.length ? { regions: f.regions } : {}),
    ...(f.instanceTypes?.length ? { instanceTypes: f.instanceTypes } : {}),
  };
}

/** The flags' misuse of one another, first found; undefined when none. */
function misuse(f: ReservedFlags): AskProblem | undefined {
  const kinds = [f.reservation !== undefined && '--reservation', f.capacityBlock !== undefined && '--capacity-block', f.queue && '--queue'].filter(
    (k): k is string => typeof k === 'string',
  );
  if (kinds.length > 1)
    return { flag: kinds[1]!, message: `${kinds.join(' and ')} ask for reserved capacity twice`, fix: `give one of them, e.g. ${kinds[0]} alone` };
  const block = f.capacityBlock !== undefined;
  for (const [flag, given] of [
    ['--duration', f.durationHours !== undefined],
    ['--count', f.count !== undefined],
    ['--start-after', f.startAfter !== undefined],
  ] as const)
    if (given && !block)
      return {
        flag,
        message: `${flag} describes a capacity block to buy`,
        fix: `add --capacity-block OFFERING --yes (see: provision offers --capacity-block ${flag} …), or drop ${flag}`,
      };
  if (f.yes && !block)
    return { flag: '--yes', message: '--yes confirms the purchase of a capacity block only', fix: 'drop --yes, or add --capacity-block OFFERING' };
  if (f.waitMs !== undefined && !f.queue)
    return { flag: '--wait', message: '--wait is how long a queued request is waited on', fix: 'add --queue, or drop --wait' };
  if (kinds.length === 0) return undefined;
  if (f.spot) return { flag: '--spot', message: `${kinds[0]} launches into reserved capacity, not spot`, fix: `drop --spot, or drop ${kinds[0]}` };
  if (f.parallel !== undefined && f.parallel > 1) return { flag: '--parallel', message: `${kinds[0]} launches one offer at a time`, fix: 'drop --parallel' };
  return undefined;
}

/** The ask the flags make, or the first problem (see the table above). */
export function reservedAskOf(f: ReservedFlags): Asked {
  const problem = misuse(f);
  if (problem) return { problem };
  if (f.reservation !== undefined) return { ask: { kind: 'reservation', id: f.reservation } };
  if (f.queue) return { ask: { kind: 'queue', waitMs: f.waitMs ?? DEFAULT_QUEUE_WAIT_MS } };
  if (f.capacityBlock === undefined) return {};
  if (!f.yes)
    return {
      problem: {
        flag: '--yes',
        message: `buying capacity block ${f.capacityBlock} is billed at once (its upfront price)`,
        fix: 'add --yes to buy it (check the price first: provision offers --capacity-block --duration D)',
      },
    };
  if (f.durationHours === undefined)
    return {
      problem: {
        flag: '--duration',
        message: 'the offering is found again by its query',
        fix: 'give the --duration (and --count, --start-after) you listed it with, e.g. --duration 24h',
      },
    };
  return { ask: { kind: 'capacity-block', offeringId: f.capacityBlock, query: blockQueryOf(f) } };
}
