/**
 * The trace alphabet of the spot market (issue 30): some VMs launch with `--spot only|auto`, most
 * of those with `--recover`, and many of them are preempted once Ready, with or without a notice
 * (`preempt-when-ready`). Drawn from a stream of its own (`trace.ts` passes it), so every seed
 * keeps the trace it had before and only gains these; level fake only (the local cloud sells no
 * spot and cannot preempt). No Temporal or filesystem import.
 *
 * | the VM                  | draws                                                              |
 * |-------------------------|--------------------------------------------------------------------|
 * | any (35 %)              | `spot` (`only` or `auto`, even), `recover` (75 %)                   |
 * | spot, `recover`         | a `vanish-when-ready` becomes a preemption (its wait for the end would never end) |
 * | spot, op `none` / `teardown-when-ready` | a preemption instead (60 %)                        |
 * | a preemption            | no notice (45 %), a notice of 1.5–3 s (20 %: the deadline comes first), or 8–20 s (35 %) |
 */
import type { SpotMode } from '../../src/core/provider';

/** Preempt the VM's instance once it is Ready (fake level; only a spot instance): `noticeMs` 0 = no notice. */
export interface PreemptOp {
  op: 'preempt-when-ready';
  noticeMs: number;
}

/** What the spot alphabet sets on a VM script. */
export interface SpotFields {
  /** `--spot`. */
  spot?: SpotMode;
  /** `--recover`. */
  recover?: boolean;
}

type Rand = () => number;
const int = (r: Rand, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));

/** The part of a VM script the spot alphabet reads and writes. */
type SpotTarget = SpotFields & { op: { op: string } | PreemptOp };

/** Draws the spot alphabet onto `vms` (mutates them) from `r`. */
export function addSpot<V extends SpotTarget>(r: Rand, vms: V[]): void {
  for (const v of vms) {
    if (r() >= 0.35) continue;
    v.spot = r() < 0.5 ? 'only' : 'auto';
    const recover = r() < 0.75;
    if (recover) v.recover = true;
    const op = v.op.op;
    const preempt = (recover && op === 'vanish-when-ready') || ((op === 'none' || op === 'teardown-when-ready') && r() < 0.6);
    if (!preempt) continue;
    const notice = r();
    v.op = { op: 'preempt-when-ready', noticeMs: notice < 0.45 ? 0 : notice < 0.65 ? int(r, 15, 30) * 100 : int(r, 8, 20) * 1_000 };
  }
}

/** The spot part of a script's size (the shrinker's measure). */
export function spotWeight(v: SpotTarget): number {
  return (v.spot ? 1 : 0) + (v.recover ? 1 : 0) + (v.op.op === 'preempt-when-ready' && (v.op as PreemptOp).noticeMs > 0 ? 1 : 0);
}

/** Simpler variants of one script's spot part: no notice, no `--recover`, no spot at all (then nothing to preempt). */
export function simplerSpot<V extends SpotTarget>(v: V): V[] {
  const out: V[] = [];
  if (v.op.op === 'preempt-when-ready' && (v.op as PreemptOp).noticeMs > 0) out.push({ ...v, op: { op: 'preempt-when-ready', noticeMs: 0 } });
  if (v.recover) {
    const { recover: _recover, ...rest } = v;
    out.push(rest as V);
  }
  if (v.spot) {
    const { spot: _spot, recover: _recover, ...rest } = v;
    out.push({ ...rest, ...(v.op.op === 'preempt-when-ready' ? { op: { op: 'none' } } : {}) } as V);
  }
  return out;
}
