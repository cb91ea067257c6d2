/**
 * The failover search, as pure functions (no Temporal import): which offer to try next, what an
 * error means for the search, and what gets blocked. `launch.ts` is the glue that runs it.
 *
 * A Capacity answer of a spot (or reserved) offer blocks only offers of that market, whatever its
 * scope: a spot stock-out in a zone says nothing of the zone's on-demand capacity (`--spot auto`
 * goes on to it). The `offer` scope needs no such rule: the offer key carries the market.
 */
import { isErrorKind, type BlockScope, type ErrorKind } from './errors';
import { FAILURE_TYPES } from './failures';
import { marketOf, offerKey } from './offers';
import type { Market, Offer } from './provider';
import type { AttemptRecord } from './api';

/** One blocked slice of the offer space. */
export interface Block {
  scope: BlockScope;
  cloud: string;
  region?: string;
  zone?: string;
  instanceType?: string;
  /** The offer key for scope 'offer'. */
  key?: string;
  kind: string;
  /** Only offers of this market (a spot offer's Capacity answer); absent: every market. */
  market?: Market;
}

export interface SearchState {
  offers: Offer[];
  /** Index of the next offer to consider. */
  cursor: number;
  blocked: Block[];
  attempts: AttemptRecord[];
  /** Re-plans done by retryUntilUp. */
  round: number;
}

export type Phase = 'prepare' | 'create' | 'boot' | 'connect';

/** What the search does after an attempt failed. */
export interface Decision {
  /** Tear down what this attempt may have created (instances by identity, then side resources). */
  compensate: 'none' | 'cleanup' | 'full';
  /** Block this slice and go on, or abort the launch. */
  next: 'continue' | 'abort';
  block?: BlockScope;
}

export function newSearch(offers: Offer[], attempts: AttemptRecord[] = [], round = 0): SearchState {
  return { offers, cursor: 0, blocked: [], attempts, round };
}

/** Default block scope of each kind (an adapter's own `block` overrides it); undefined = nothing is blocked. */
export const DEFAULT_SCOPE: Record<ErrorKind, BlockScope | undefined> = {
  Transient: 'offer',
  Capacity: 'offer',
  Quota: 'region',
  Unavailable: 'offer',
  Failed: 'offer',
  InvalidRequest: undefined,
  Credentials: undefined,
};

/**
 * The provider kind a failure type counts as in the search: a kind is itself; WorkerKeyMismatch
 * is `Credentials` (the workers do not share one SSH key: no other offer can help, so the launch
 * ends); every other type of the vocabulary (BootFailed, SshNotReady, HostKeyMismatch, …), a
 * timeout or an unknown type is `Failed` (the attempt failed; the instance may exist).
 */
export function kindOfFailureType(type: string | undefined): ErrorKind {
  if (type === FAILURE_TYPES.WorkerKeyMismatch) return 'Credentials';
  return isErrorKind(type) ? type : 'Failed';
}

/**
 * The decision table. `phase` is where the attempt failed; `adapterBlock` is the scope an
 * adapter attached to its error, which overrides the default.
 */
export function decide(kind: ErrorKind, phase: Phase, adapterBlock?: BlockScope): Decision {
  // Prepare made at most side resources; create and later may have made an instance,
  // even on error (the ambiguous outcome) — except Unavailable, which promises nothing was created.
  const created = phase !== 'prepare' && kind !== 'Unavailable';
  const compensate: Decision['compensate'] = created ? 'full' : 'cleanup';
  if (kind === 'InvalidRequest' || kind === 'Credentials') return { compensate, next: 'abort' };
  const block = adapterBlock ?? DEFAULT_SCOPE[kind];
  return block ? { compensate, next: 'continue', block } : { compensate, next: 'continue' };
}

export function blockFor(offer: Offer, scope: BlockScope, kind: string): Block {
  const market = marketOf(offer);
  const base = { scope, cloud: offer.cloud, kind, ...(kind === 'Capacity' && market !== 'on-demand' ? { market } : {}) };
  switch (scope) {
    case 'offer':
      return { ...base, key: offerKey(offer) };
    case 'zone':
      return offer.zone === undefined ? { ...base, region: offer.region } : { ...base, region: offer.region, zone: offer.zone };
    case 'type-in-region':
      return { ...base, region: offer.region, instanceType: offer.instanceType };
    case 'region':
      return { ...base, region: offer.region };
    case 'cloud':
      return base;
  }
}

export function isBlocked(offer: Offer, blocked: readonly Block[]): boolean {
  return blocked.some((b) => {
    if (b.cloud !== offer.cloud || (b.market !== undefined && b.market !== marketOf(offer))) return false;
    switch (b.scope) {
      case 'offer':
        return b.key === offerKey(offer);
      case 'zone':
        return b.region === offer.region && (b.zone === undefined || b.zone === offer.zone);
      case 'type-in-region':
        return b.region === offer.region && b.instanceType === offer.instanceType;
      case 'region':
        return b.region === offer.region;
      case 'cloud':
        return true;
    }
  });
}

/** The next unblocked offer at or after the cursor, or undefined when the plan is exhausted. */
export function nextOffer(state: SearchState): { index: number; offer: Offer } | undefined {
  for (let i = state.cursor; i < state.offers.length; i++) {
    const offer = state.offers[i]!;
    if (!isBlocked(offer, state.blocked)) return { index: i, offer };
  }
  return undefined;
}

/** State after an attempt at `index` failed with `decision`. */
export function afterFailure(state: SearchState, index: number, offer: Offer, kind: string, decision: Decision, attempt: AttemptRecord): SearchState {
  const blocked = decision.block ? [...state.blocked, blockFor(offer, decision.block, kind)] : state.blocked;
  return { ...state, cursor: index + 1, blocked, attempts: [...state.attempts, attempt] };
}

/** A fresh round over a new plan, keeping the attempt history (retryUntilUp). */
export function replan(state: SearchState, offers: Offer[]): SearchState {
  return newSearch(offers, state.attempts, state.round + 1);
}

/**
 * The kind that names an exhausted search: the one kind every attempt failed with, else the most
 * frequent (ties: the latest), else Capacity when nothing was attempted (every offer was blocked).
 */
export function exhaustedKind(attempts: readonly AttemptRecord[]): ErrorKind {
  const counts = new Map<ErrorKind, number>();
  for (const a of attempts) {
    const k = kindOfFailureType(a.kind);
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  let best: ErrorKind = 'Capacity';
  let most = 0;
  for (const a of attempts) {
    const k = kindOfFailureType(a.kind);
    if ((counts.get(k) ?? 0) >= most) [best, most] = [k, counts.get(k) ?? 0];
  }
  return best;
}

/** Human table of attempts, for failure messages and the CLI. */
export function attemptsTable(attempts: readonly AttemptRecord[]): string {
  return attempts
    .map(
      (a) =>
        `#${a.index + 1} ${offerKey(a.offer)}: ${a.outcome}${a.kind ? ` (${a.kind}${a.phase ? ` at ${a.phase}` : ''})` : ''}${a.message ? ` — ${a.message}` : ''}`,
    )
    .join('\n');
}
