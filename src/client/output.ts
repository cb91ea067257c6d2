/** Printing helpers shared by commands: tables, durations, stage lines, and the one error printer. */
import {
  ActivityFailure,
  ApplicationFailure,
  ChildWorkflowFailure,
  ServiceError,
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { InputError } from '../core/errors';
import type { AttemptRecord, VmStatus } from '../core/api';
import { marketOf } from '../core/offers';
import type { Offer } from '../core/provider';
import type { Spend } from '../core/spend';
import { EXIT_BAD_INPUT, EXIT_FAILED, type Io } from './command';

export function table(rows: string[][]): string {
  if (rows.length === 0) return '';
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n') + '\n';
}

export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${s % 60 ? `${s % 60}s` : ''}`;
  const h = Math.floor(m / 60);
  return h < 48 ? `${h}h${m % 60 ? `${m % 60}m` : ''}` : `${Math.floor(h / 24)}d${h % 24}h`;
}

export function price(p: number | undefined): string {
  return p === undefined ? '-' : `$${p.toFixed(p < 1 ? 3 : 2)}/h`;
}

/** The price of an offer with its market: `$2.99/h`, or `spot $1.20/h (on-demand $2.99/h)` on a spot offer. */
export function offerPrice(o: Pick<Offer, 'pricePerHour' | 'market' | 'spot' | 'onDemandPricePerHour'> | undefined): string {
  if (!o) return price(undefined);
  const market = marketOf(o);
  if (market === 'on-demand') return price(o.pricePerHour);
  return `${market} ${price(o.pricePerHour)}${o.onDemandPricePerHour !== undefined ? ` (on-demand ${price(o.onDemandPricePerHour)})` : ''}`;
}

/** `$0.0123`, `$12.40`. */
export function usd(n: number): string {
  return `$${n.toFixed(n < 1 ? 4 : 2)}`;
}

/** `$0.0123 so far (2 billed attempts), $36.00/h now; budget $5.00 (80 % reached)`. */
export function spendLine(s: Spend, budget?: VmStatus['budget']): string {
  const billed = s.attempts.filter((a) => a.billedMs > 0).length;
  const parts = [`${usd(s.totalUsd)}${s.unknownPrice ? '+ (a price is unknown)' : ''} so far (${billed} billed attempt${billed === 1 ? '' : 's'})`];
  if (s.priorUsd) parts[0] += `, incl. ${usd(s.priorUsd)} by the runs before the last --recover relaunch`;
  if (s.upfrontUsd) parts[0] += `, incl. ${usd(s.upfrontUsd)} paid upfront for the capacity block`;
  if (s.ratePerHour > 0) parts.push(`${price(s.ratePerHour)} now`);
  const b = budget ? `; budget ${usd(budget.usd)}${budget.reachedAt ? ' (reached: torn down)' : budget.warnedAt ? ' (80 % reached)' : ''}` : '';
  return parts.join(', ') + b;
}

export function where(s: Pick<VmStatus, 'offer'>): string {
  return s.offer ? `${s.offer.cloud}/${s.offer.region}${s.offer.zone ? `/${s.offer.zone}` : ''} ${s.offer.instanceType}` : '';
}

export function stageLine(s: VmStatus): string {
  const launching = ['preparing', 'creating', 'booting', 'connecting', 'compensating'].includes(s.stage);
  // While compensating, the failed attempt is already recorded: it is the last one, not a new one.
  const attempt = launching ? `, attempt ${s.stage === 'compensating' ? s.attempts.length : s.attempts.length + 1}` : '';
  const leak = s.leak
    ? ` — LEAKED ${s.leak.location.cloud}/${s.leak.location.region}: ${s.leak.lastError} (retrying; 'provision down ${s.name}' retries now)`
    : '';
  return `${s.name}: ${s.stage}${s.offer && s.stage !== 'planning' ? ` (${where(s)}${attempt})` : ''}${leak}`;
}

export function attemptsRows(attempts: readonly AttemptRecord[]): string[][] {
  return [
    ['#', 'CLOUD/REGION', 'TYPE', 'OUTCOME', 'WHY'],
    ...attempts.map((a) => [
      String(a.index + 1),
      `${a.offer.cloud}/${a.offer.region}${a.offer.zone ? `/${a.offer.zone}` : ''}`,
      marketOf(a.offer) === 'on-demand' ? a.offer.instanceType : `${a.offer.instanceType} (${marketOf(a.offer)})`,
      `${a.outcome}${a.compensated ? ' (cleaned up)' : ''}`,
      a.kind ? `${a.kind}${a.phase ? ` at ${a.phase}` : ''}${a.message ? `: ${a.message.split('\n')[0]}` : ''}` : '',
    ]),
  ];
}

/** A failure a command can explain (exit 1): what went wrong and what to type next. */
export class CommandFailure extends Error {
  constructor(
    message: string,
    readonly next: string,
  ) {
    super(message);
    this.name = 'CommandFailure';
  }
}

/**
 * What failed, under Temporal's wrappers: a workflow's (or an Update's) failure wraps an activity's
 * ("Activity task failed"), which wraps the ApplicationFailure that says what happened.
 */
export function rootFailure(err: unknown): { message: string; type?: string } {
  let e: unknown = err;
  while (
    (e instanceof WorkflowFailedError || e instanceof WorkflowUpdateFailedError || e instanceof ActivityFailure || e instanceof ChildWorkflowFailure) &&
    e.cause
  )
    e = e.cause;
  const message = e instanceof Error ? e.message : String(e);
  return e instanceof ApplicationFailure && e.type ? { message, type: e.type } : { message };
}

/** The Temporal server's own words under the SDK's wrapper of a refused call ("Failed to start Workflow"). */
export function serverMessage(err: unknown): string | undefined {
  if (!(err instanceof ServiceError)) return undefined;
  const details = (err.cause as { details?: unknown } | undefined)?.details;
  return typeof details === 'string' && details !== '' ? details : undefined;
}

/** The one place that turns an error into output and an exit code. */
export function reportError(io: Io, err: unknown, json: boolean): number {
  if (err instanceof InputError) {
    if (json) io.out(JSON.stringify({ ok: false, error: { kind: 'InvalidInput', field: err.field, message: err.message, fix: err.suggestion } }) + '\n');
    else io.err(`error: ${err.field}: ${err.message}\n${err.suggestion ? `  fix: ${err.suggestion}\n` : ''}`);
    return EXIT_BAD_INPUT;
  }
  let message = err instanceof Error ? err.message : String(err);
  let kind: string | undefined;
  let next = 'see the worker log (npx provision server status) or the Web UI';
  if (err instanceof CommandFailure) {
    next = err.next;
  } else if (err instanceof WorkflowNotFoundError) {
    message = 'no such VM: nothing with that name was started on this deployment';
    next = 'list VMs with: npx provision list --all';
  } else if (err instanceof WorkflowFailedError || err instanceof WorkflowUpdateFailedError) {
    ({ message, type: kind } = rootFailure(err));
  } else if (serverMessage(err)) {
    message = `${message}: the Temporal server answered: ${serverMessage(err)}`;
    next = 'check TEMPORAL_ADDRESS / TEMPORAL_NAMESPACE (or the temporal.toml profile) and the server, then run it again';
  } else if ((err as { code?: string }).code === 'TEMPORAL_NOT_RUNNING') {
    next = 'npx provision server start';
  }
  if (json) io.out(JSON.stringify({ ok: false, error: { ...(kind ? { kind } : {}), message, next } }) + '\n');
  else io.err(`error: ${message}\n  next: ${next}\n`);
  return EXIT_FAILED;
}
