/**
 * The contract suite: our fixtures against the vendors' own published clients, and our adapters'
 * requests against the vendors' requests for the same calls (see check.ts and known.ts).
 * Prints one summary line: each cloud, the client and version it was checked against, and its
 * mismatch count.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { checkHttpCloud, type CloudReport } from './check';
import { HTTP_CONTRACTS } from './clouds';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { judge } from './check';
import { PROTO_ROOT, compareNebiusProtos } from './nebius-protos';
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

  it('nebius: our .proto files declare what the SDK\'s descriptors declare, and our addresses are the SDK\'s', async () => {
    const r = await compareNebiusProtos();
    expect(r.differences).toEqual([]);
    expect(r.checked).toBeGreaterThan(40);
    const found = r.addresses.filter((a) => a.ours !== a.sdk).map((a) => ({ cloud: 'nebius', call: a.service, aspect: 'address', ours: a.ours ?? 'absent', vendor: a.sdk }));
    const j = judge('nebius', found);
    reports.push({ cloud: 'nebius', client: 'nebius', version: r.sdk, mismatches: j.mismatches, accepted: j.accepted, failures: j.failures, notes: [] });
    process.stdout.write(`contract nebius: ${r.checked} messages, enums and services compared with the SDK's descriptors\n`);
    expect(j.failures).toEqual([]);
  }, 300_000);

  it('nebius: a field number changed on purpose in a copy of our protos is caught', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpuprov-protos-'));
    try {
      cpSync(PROTO_ROOT, dir, { recursive: true });
      const file = join(dir, 'nebius/vpc/v1/vpc.proto');
      writeFileSync(file, readFileSync(file, 'utf8').replace('string page_token = 3;', 'string page_token = 4;'));
      const r = await compareNebiusProtos(dir);
      expect(r.differences).toEqual(['nebius.vpc.v1.ListSubnetsRequest.page_token: number ours 4, SDK 3']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
