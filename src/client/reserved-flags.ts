/**
 * The reserved-capacity flags of `start` and `offers` (issue 31): their table (the source of
 * --help) and their values, checked into one ask by src/core/reserved-ask.ts; every refusal is an
 * InputError naming the flag and the fix (exit 2, nothing started).
 */
import { InputError } from '../core/errors';
import type { GpuRequest } from '../core/provider';
import type { BlockQuery, ReservedAsk } from '../core/reservation';
import { blockQueryOf, reservedAskOf, type ReservedFlags } from '../core/reserved-ask';
import { DEFAULT_QUEUE_WAIT_MS } from '../core/reserved-window';
import { parseDuration } from './flag-values';
import { show, type FlagSpec } from './flags';

const HOUR = 3_600_000;

/** The block query's flags, shared by `offers --capacity-block` and `start --capacity-block`. */
const BLOCK_QUERY_FLAGS = [
  {
    name: 'duration',
    type: 'string',
    value: 'DURATION',
    meaning: 'how long the capacity block lasts',
    format: 'whole hours as a duration: 24h, 2d, 7d (the cloud sells its own lengths)',
    default: 'none: required with --capacity-block',
    example: '--duration 24h',
  },
  {
    name: 'count',
    type: 'string',
    value: 'N',
    meaning: 'instances in the capacity block',
    format: 'a whole number, 1 to 64',
    default: '1',
    example: '--count 2',
  },
  {
    name: 'start-after',
    type: 'string',
    value: 'TIME',
    meaning: 'only blocks that start at or after this time',
    format: 'an ISO 8601 date or time, e.g. 2027-01-04 or 2027-01-04T09:00:00Z',
    default: 'now',
    example: '--start-after 2027-01-04',
  },
] as const satisfies readonly FlagSpec[];

/** `start`'s reserved-capacity flags. */
export const START_RESERVED_FLAGS = [
  {
    name: 'reservation',
    type: 'string',
    value: 'ID',
    meaning:
      'launch into this reservation (or a capacity block already bought) and nothing else: a full one fails with Capacity, never an on-demand launch; a window that starts later is waited for',
    format: "the cloud's reservation id (see: provision offers --reserved)",
    default: 'none',
    example: '--reservation cr-0123456789abcdef0',
  },
  {
    name: 'capacity-block',
    type: 'string',
    value: 'OFFERING',
    meaning:
      "buy this capacity block (billed upfront at once, counted in the spend and checked against --budget) and launch into it; the launch waits for the block's start, and the VM is torn down before its end",
    format: 'an offering id from provision offers --capacity-block, with the same --duration, --count, --start-after; needs --yes',
    default: 'none',
    example: '--capacity-block cbo-0123',
  },
  {
    name: 'yes',
    type: 'boolean',
    meaning: 'confirm the purchase of --capacity-block',
    default: 'off: --capacity-block is refused without it',
    example: '--yes',
  },
  ...BLOCK_QUERY_FLAGS,
  {
    name: 'queue',
    type: 'boolean',
    meaning: "place a queued request where a cloud queues (its plan's queued offers are tried first) and wait up to --wait for it; then the ordinary offers",
    default: 'off',
    example: '--queue',
  },
  {
    name: 'wait',
    type: 'string',
    value: 'DURATION',
    meaning: 'how long a queued request is waited on before the next offer',
    format: 'a duration, 1 minute to 7 days (e.g. 30m, 6h, 2d)',
    default: `${DEFAULT_QUEUE_WAIT_MS / HOUR}h`,
    example: '--wait 6h',
  },
] as const satisfies readonly FlagSpec[];

/** `offers`' reserved-capacity flags. */
export const OFFERS_RESERVED_FLAGS = [
  {
    name: 'reserved',
    type: 'boolean',
    meaning:
      "list the account's reservations usable for the request (type, zone, free of total, window) instead of the offers; their price is what launching adds (0 for a paid reservation)",
    default: 'off',
    example: '--reserved',
  },
  {
    name: 'capacity-block',
    type: 'boolean',
    meaning: 'list the capacity blocks on sale for the request, with their upfront price (buy one with start --capacity-block OFFERING --yes)',
    default: 'off',
    example: '--capacity-block',
  },
  ...BLOCK_QUERY_FLAGS,
] as const satisfies readonly FlagSpec[];

type Raw = { [K in 'reservation' | 'capacity-block' | 'duration' | 'count' | 'start-after' | 'wait']?: string | boolean } & { yes?: boolean; queue?: boolean };

/** `--duration`: whole hours. */
function hoursOf(raw: string): number {
  const ms = parseDuration('--duration', raw);
  if (ms < HOUR || ms % HOUR !== 0) throw new InputError('--duration', `${show(raw)} is not a whole number of hours`, 'e.g. --duration 24h or --duration 7d');
  return ms / HOUR;
}

function countOf(raw: string): number {
  const n = /^\d{1,2}$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
  if (!(n >= 1 && n <= 64)) throw new InputError('--count', `${show(raw)} is not a count from 1 to 64`, 'e.g. --count 2');
  return n;
}

function timeOf(raw: string): string {
  const ms = /^\d{4}-\d{2}-\d{2}/.test(raw.trim()) ? Date.parse(raw.trim()) : NaN;
  if (Number.isNaN(ms))
    throw new InputError('--start-after', `${show(raw)} is not an ISO 8601 date or time`, 'e.g. --start-after 2027-01-04 or 2027-01-04T09:00:00Z');
  return new Date(ms).toISOString();
}

function waitOf(raw: string): number {
  const ms = parseDuration('--wait', raw);
  if (ms < 60_000 || ms > 7 * 24 * HOUR) throw new InputError('--wait', `${show(raw)} is outside 1 minute to 7 days`, 'e.g. --wait 6h');
  return ms;
}

const str = (v: string | boolean | undefined): string | undefined => (typeof v === 'string' ? v : undefined);

/** The block query flags' values (`offers --capacity-block`). */
export function blockQueryFlags(v: Raw, req: { gpu?: GpuRequest; regions?: string[]; instanceTypes?: string[] }): BlockQuery {
  const d = str(v.duration);
  if (d === undefined) throw new InputError('--duration', 'a capacity block is listed for a length', 'add --duration 24h (or 2d, 7d)');
  return blockQueryOf({ ...queryValues(v), durationHours: hoursOf(d), ...req });
}

function queryValues(v: Raw): Pick<ReservedFlags, 'durationHours' | 'count' | 'startAfter'> {
  const d = str(v.duration);
  const c = str(v.count);
  const s = str(v['start-after']);
  return {
    ...(d !== undefined ? { durationHours: hoursOf(d) } : {}),
    ...(c !== undefined ? { count: countOf(c) } : {}),
    ...(s !== undefined ? { startAfter: timeOf(s) } : {}),
  };
}

/** `start`'s reserved flags → the ask (or none); a misuse is an InputError naming its flag. */
export function reservedAskFromFlags(v: Raw, other: Pick<ReservedFlags, 'spot' | 'parallel' | 'gpu' | 'regions' | 'instanceTypes'>): ReservedAsk | undefined {
  const w = str(v.wait);
  const r = reservedAskOf({
    ...other,
    ...queryValues(v),
    ...(str(v.reservation) !== undefined ? { reservation: str(v.reservation)! } : {}),
    ...(str(v['capacity-block']) !== undefined ? { capacityBlock: str(v['capacity-block'])! } : {}),
    ...(v.yes ? { yes: true } : {}),
    ...(v.queue ? { queue: true } : {}),
    ...(w !== undefined ? { waitMs: waitOf(w) } : {}),
  });
  if ('problem' in r) throw new InputError(r.problem.flag, r.problem.message, r.problem.fix);
  return r.ask;
}
