/**
 * `provision offers --reserved` (the account's reservations usable for the request) and
 * `offers --capacity-block` (the blocks on sale, with their upfront price): tables and --json.
 */
import type { BlockOfferingsOutput, PlanOutput } from '../../activities';
import type { Offer } from '../../core/provider';
import type { BlockOffering } from '../../core/reservation';
import { EXIT_FAILED, EXIT_OK, type Io } from '../command';
import { price, table } from '../output';

/** What launching into the reservation adds: nothing for a paid one (say so, and why), else its price. */
function priceCell(o: Offer): string {
  const note = o.reservation?.priceNote;
  if (o.pricePerHour === 0 && o.reservation) return `no extra charge${note ? `: ${note}` : ''}`;
  return `${price(o.pricePerHour)}${note ? ` (${note})` : ''}`;
}

/** The reservations table (header first): where, the type, free of total, the window and what launching costs. */
export function reservationRows(offers: readonly Offer[]): string[][] {
  const head = ['CLOUD', 'REGION', 'ZONE', 'TYPE', 'GPU', 'RESERVATION', 'KIND', 'FREE', 'WINDOW', 'PRICE', 'ON-DEMAND'];
  const row = (o: Offer): string[] => {
    const r = o.reservation;
    const window = r?.start || r?.end ? `${r.start ?? 'now'} → ${r.end ?? 'open'}` : 'open';
    return [
      o.cloud,
      o.region,
      o.zone ?? '-',
      o.instanceType,
      o.gpu ? `${o.gpu.model}:${o.gpu.count}` : '-',
      r?.id ?? '-',
      r?.kind ?? '-',
      r ? `${r.free}/${r.total}` : '-',
      window,
      priceCell(o),
      price(o.onDemandPricePerHour),
    ];
  };
  return [head, ...offers.map(row)];
}

/** The block offerings table (header first). */
export function blockRows(offerings: readonly BlockOffering[]): string[][] {
  const head = ['OFFERING', 'CLOUD', 'REGION', 'ZONE', 'TYPE', 'COUNT', 'START', 'END', 'HOURS', 'UPFRONT'];
  const row = (b: BlockOffering): string[] => [
    b.offeringId,
    b.cloud,
    b.region,
    b.zone ?? '-',
    b.instanceType,
    String(b.count),
    b.start,
    b.end,
    String(b.durationHours),
    `${b.currency === 'USD' ? '$' : `${b.currency} `}${b.upfrontPrice.toFixed(2)}`,
  ];
  return [head, ...offerings.map(row)];
}

type Skipped = { cloud: string; kind: string; message: string };

function printSkipped(io: Io, skipped: readonly Skipped[]): void {
  for (const s of skipped) io.err(`${s.cloud}: skipped (${s.kind}): ${s.message}\n`);
}

/** `offers --reserved`: the plan's reserved offers. */
export function printReserved(io: Io, plan: PlanOutput, json: boolean): number {
  const failed = plan.offers.length === 0 && plan.skipped.length > 0;
  if (json) {
    io.out(JSON.stringify(failed ? { ok: false, ...plan, error: { message: 'no reservation of the account fits the request' } } : plan) + '\n');
    return failed ? EXIT_FAILED : EXIT_OK;
  }
  if (plan.offers.length) io.out(table(reservationRows(plan.offers)));
  printSkipped(io, plan.skipped);
  io.out(
    `\n${plan.offers.length} reservation(s). PRICE is what launching into one adds (a paid reservation is billed with the reservation, not again).${
      plan.offers.length ? ` next: npx provision start --name gpu1 --reservation ${plan.offers[0]!.reservation?.id ?? 'ID'}` : ''
    }\n`,
  );
  return failed ? EXIT_FAILED : EXIT_OK;
}

/** `offers --capacity-block`: the blocks on sale. */
export function printBlocks(io: Io, out: BlockOfferingsOutput, json: boolean, again: string): number {
  const failed = out.offerings.length === 0 && out.skipped.length > 0 && out.skipped.every((s) => s.kind !== 'InvalidRequest');
  if (json) {
    io.out(JSON.stringify(failed ? { ok: false, ...out, error: { message: 'no cloud could list capacity blocks' } } : out) + '\n');
    return failed ? EXIT_FAILED : EXIT_OK;
  }
  if (out.offerings.length) io.out(table(blockRows(out.offerings)));
  printSkipped(io, out.skipped);
  const first = out.offerings[0];
  io.out(
    `\n${out.offerings.length} capacity block offering(s); UPFRONT is billed at once when bought.${
      first ? ` next: npx provision start --name gpu1 --capacity-block ${first.offeringId}${again} --yes` : ''
    }\n`,
  );
  return failed ? EXIT_FAILED : EXIT_OK;
}
