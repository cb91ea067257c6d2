import { GpuprovClient } from '../client';
import { formatGpuRequest } from '../../core/offer-match';
import { EXIT_OK, type Command } from '../command';
import { connectClient } from '../connect';
import { parseFlags, parseStart } from '../options';
import { price, reportError, table } from '../output';

export const offersCommand: Command = {
  name: 'offers',
  summary: "what every configured cloud offers, with prices (computed on the worker)",
  usage: 'provision offers [--gpu A100[:N][+]] [--cloud …] [--region …] [--max-price USD/h] [--json]',
  async run(args, io) {
    const json = args.includes('--json');
    try {
      parseFlags(args, { gpu: { type: 'string' }, cloud: { type: 'string' }, region: { type: 'string' }, 'max-price': { type: 'string' }, json: { type: 'boolean' } });
      // Reuse start's validation for the shared flags (the name is a placeholder).
      const { spec } = parseStart(['--name', 'offers', ...args]);
      const conn = await connectClient(io, { autoStart: true });
      const plan = await new GpuprovClient(conn.client).offers({
        request: { vmName: 'offers', k8s: false, ...(spec.gpu ? { gpu: spec.gpu } : {}), ...(spec.regions ? { regions: spec.regions } : {}), ...(spec.maxPricePerHour !== undefined ? { maxPricePerHour: spec.maxPricePerHour } : {}) },
        ...(spec.clouds ? { clouds: spec.clouds } : {}),
      });
      if (json) {
        io.out(JSON.stringify(plan) + '\n');
        return EXIT_OK;
      }
      io.out(table([['CLOUD', 'REGION', 'ZONE', 'TYPE', 'GPU', 'PRICE'], ...plan.offers.map((o) => [o.cloud, o.region, o.zone ?? '-', o.instanceType, o.gpu ? `${o.gpu.model}:${o.gpu.count}` : '-', price(o.pricePerHour)])]));
      for (const s of plan.skipped) io.err(`skipped ${s.cloud}: ${s.message}\n`);
      io.out(`\n${plan.offers.length} offers. next: npx provision start --name gpu1${spec.gpu ? ` --gpu ${formatGpuRequest(spec.gpu)}` : ''}\n`);
      return EXIT_OK;
    } catch (err) {
      return reportError(io, err, json);
    }
  },
};
