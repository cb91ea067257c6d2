/**
 * The contract suite: our fixtures against the vendors' own published clients, and our adapters'
 * requests against the vendors' requests for the same calls (see check.ts and known.ts).
 * Prints one summary line: each cloud, the client and version it was checked against, and its
 * mismatch count.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { checkHttpCloud, type CloudReport } from './check';
import { HTTP_CONTRACTS } from './clouds';
import { vendorsMissing } from './vendor';

/** Clouds we adapt to whose vendor publishes no client to check against. */
const NO_VENDOR_CLIENT = ['massedcompute (no vendor client)', 'local (not a vendor cloud)', 'docker (not a vendor cloud)'];

describe.skipIf(vendorsMissing())('contract: the vendors\' clients against our fixtures', () => {
  const reports: CloudReport[] = [];
  afterAll(() => {
    const done = reports.map((r) => `${r.cloud} ${r.client}==${r.version} ${r.mismatches} mismatch${r.mismatches === 1 ? '' : 'es'}${r.accepted ? ` (+${r.accepted} accepted)` : ''}`);
    process.stdout.write(`\ncontract summary: ${[...done, ...NO_VENDOR_CLIENT].join('; ')}\n`);
  });

  for (const c of HTTP_CONTRACTS) {
    it(`${c.cloud}: the fixture serves ${c.client}, and our requests match its requests`, async () => {
      const report = await checkHttpCloud(c);
      reports.push(report);
      for (const n of report.notes) process.stdout.write(`contract ${c.cloud}: ${n}\n`);
      expect(report.failures).toEqual([]);
    }, 300_000);
  }
});
