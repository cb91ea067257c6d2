/** `provision offers`: every configured cloud's offers with prices, and why a cloud listed none. */
import type { PlanOutput } from '../../activities';
import { GpuprovClient } from '../client';
import { formatGpuRequest } from '../../core/offer-match';
import { factsOf } from '../../core/clouds';
import { EXIT_FAILED, EXIT_OK, type Command, type Io } from '../command';
import { connectClient } from '../connect';
import { leaf } from '../define';
import { checkSpecFromFlags, VM_FLAGS, vmFieldsOf } from '../options';
import { table } from '../output';
import { marketOf } from '../../core/offers';
import { marketProblem } from '../../core/markets';
import type { SpotMode } from '../../core/provider';
import { offerRows } from './offers-price';
import { printBlocks, printReserved } from './offers-reserved';
import { blockQueryFlags, OFFERS_RESERVED_FLAGS } from '../reserved-flags';
import { InputError } from '../../core/errors';

type Skipped = PlanOutput['skipped'][number];

/** What to do about a cloud that listed nothing: the variable to fix when it refused the credentials, the engine when it refused as a whole. */
function fixFor(s: Skipped, spot: SpotMode | undefined): string {
  const facts = factsOf(s.cloud);
  const market = facts && s.kind === 'InvalidRequest' ? marketProblem(s.cloud, facts, spot) : undefined;
  if (market) return market.fix;
  if (s.kind === 'Credentials') return `set valid credentials on the worker: ${factsOf(s.cloud)?.credentials ?? `the ${s.cloud} credentials`}`;
  if (s.kind === 'Transient') return 'the cloud did not answer; try again in a minute';
  // Refused as a whole (a Docker engine not reachable or too old): the request is not the problem.
  if (s.kind === 'Unavailable') return 'fix what the message names on the worker (the engine or endpoint), or leave this cloud out';
  return 'widen the search (--gpu, --region, --max-price) or leave this cloud out';
}

function printSkipped(io: Io, skipped: readonly Skipped[], spot: SpotMode | undefined): void {
  for (const s of skipped) io.err(`${s.cloud}: skipped (${s.kind}): ${s.message}\n  fix: ${fixFor(s, spot)}\n`);
}

export const offersCommand: Command = leaf({
  name: 'offers',
  summary: 'what every configured cloud offers, with prices and where each price came from (computed on the worker)',
  flags: [VM_FLAGS.gpu, VM_FLAGS.cloud, VM_FLAGS.region, VM_FLAGS['instance-type'], VM_FLAGS['max-price'], VM_FLAGS.spot, ...OFFERS_RESERVED_FLAGS],
  notes:
    "A cloud that cannot list (refused credentials, no such GPU, no answer, no spot under --spot) is named with its reason; the others are still listed. PRICED: `api 3m` is a price read from the cloud 3 minutes ago, `catalog 2025-06` one from gpuprov's table of that date (--json: priceSource, pricedAt). With --spot: MARKET, PRICE (the spot price charged) and ON-DEMAND (the on-demand price beside it; --json: market, pricePerHour, onDemandPricePerHour), spot offers first under --spot auto. With --reserved: the account's reservations (--json: each offer's reservation). With --capacity-block --duration D: the blocks on sale and their UPFRONT price (--json: offerings).",
  temporal: true,
  async run({ values, json }, io) {
    // The same schema as start's (the name is a placeholder).
    const spec = checkSpecFromFlags({ name: 'offers', ...vmFieldsOf(values) });
    if (values.reserved && values['capacity-block'])
      throw new InputError('--capacity-block', '--reserved and --capacity-block list different things', 'give one of them');
    for (const f of ['duration', 'count', 'start-after'] as const)
      if (values[f] !== undefined && !values['capacity-block'])
        throw new InputError(`--${f}`, `--${f} describes a capacity block`, `add --capacity-block, or drop --${f}`);
    const query = values['capacity-block']
      ? blockQueryFlags(values, {
          ...(spec.gpu ? { gpu: spec.gpu } : {}),
          ...(spec.regions ? { regions: spec.regions } : {}),
          ...(spec.instanceTypes ? { instanceTypes: spec.instanceTypes } : {}),
        })
      : undefined;
    const conn = await connectClient(io, { autoStart: true });
    const gpuprov = new GpuprovClient(conn.client, io.env.GPUPROV_TASK_QUEUE || undefined);
    if (query) {
      const out = await gpuprov.blockOfferings({ query, ...(spec.clouds ? { clouds: spec.clouds } : {}) });
      const again = ` --duration ${query.durationHours}h${query.count !== 1 ? ` --count ${query.count}` : ''}${query.startAfter ? ` --start-after ${query.startAfter}` : ''}`;
      return printBlocks(io, out, json === true, again);
    }
    const plan = await gpuprov.offers({
      request: {
        vmName: 'offers',
        k8s: false,
        ...(spec.gpu ? { gpu: spec.gpu } : {}),
        ...(spec.regions ? { regions: spec.regions } : {}),
        ...(spec.instanceTypes ? { instanceTypes: spec.instanceTypes } : {}),
        ...(spec.maxPricePerHour !== undefined ? { maxPricePerHour: spec.maxPricePerHour } : {}),
        ...(spec.spot ? { spot: spec.spot } : {}),
        ...(values.reserved ? { reserved: { kind: 'reservation' as const } } : {}),
      },
      ...(spec.clouds ? { clouds: spec.clouds } : {}),
      listOnly: true,
    });
    if (values.reserved) return printReserved(io, plan, json === true);
    // Nothing listed because every cloud failed: that is a failure, with each cloud's reason.
    const failed = plan.offers.length === 0 && plan.skipped.length > 0;
    if (json) {
      // Under --spot every offer names its market (absent otherwise means on-demand).
      const listed = spec.spot ? { ...plan, offers: plan.offers.map((o) => ({ ...o, market: marketOf(o) })) } : plan;
      const next = plan.skipped.map((s) => `${s.cloud}: ${fixFor(s, spec.spot)}`).join('; ');
      io.out(JSON.stringify(failed ? { ok: false, ...listed, error: { message: 'no cloud could list offers', next } } : listed) + '\n');
      return failed ? EXIT_FAILED : EXIT_OK;
    }
    if (plan.offers.length) io.out(table(offerRows(plan.offers, Date.now(), spec.spot)));
    printSkipped(io, plan.skipped, spec.spot);
    if (failed) {
      io.err('error: no cloud could list offers (see each reason above)\n');
      return EXIT_FAILED;
    }
    const again = `npx provision start --name gpu1${spec.gpu ? ` --gpu ${formatGpuRequest(spec.gpu)}` : ''}${spec.spot ? (spec.spot === 'auto' ? ' --spot auto' : ' --spot') : ''}`;
    io.out(`\n${plan.offers.length} offers. next: ${plan.offers.length ? again : 'widen the search (--gpu, --region, --cloud, --max-price)'}\n`);
    return EXIT_OK;
  },
});
