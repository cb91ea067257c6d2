/**
 * `provision offers` when a cloud refuses its credentials: the cloud is named with the vendor's
 * reason and the variable to fix, and the other clouds' offers are still listed. Lambda's real
 * adapter talks to a local HTTP server that answers as Lambda does for a bad key.
 */
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../../src/activities';
import { runTestCli, type CliResult } from '../../harness/cli';
import { LambdaProvider } from '../../../src/providers/lambda';
import { ProviderRegistry } from '../../../src/providers/registry';
import { loadOrCreateSshIdentity, type SshIdentity } from '../../../src/ssh';
import type { CloudProvider } from '../../../src/core/provider';
import { FakeProvider } from '../../harness/fake-provider';
import { requireServer, startTestWorker } from '../../harness/temporal';

const REASON = 'API key was invalid, expired, or deleted.';

describe.skipIf(!requireServer())('provision offers with a cloud that refuses its key', () => {
  let root: string;
  let vendor: Server;
  let lambdaUrl: string;
  let ssh: SshIdentity;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'gpuprov-offers-'));
    ssh = await loadOrCreateSshIdentity(join(root, 'keys'));
    vendor = createServer((_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'global/invalid-api-key', message: REASON } }));
    });
    await new Promise<void>((r) => vendor.listen(0, '127.0.0.1', () => r()));
    lambdaUrl = `http://127.0.0.1:${(vendor.address() as { port: number }).port}/api/v1`;
  });
  afterAll(() => {
    vendor?.close();
    rmSync(root, { recursive: true, force: true });
  });

  async function offers(providers: CloudProvider[], ...args: string[]): Promise<CliResult> {
    const worker = await startTestWorker({ activities: createActivities({ registry: new ProviderRegistry(providers), ssh, owner: 'default' }) });
    try {
      return await runTestCli(root, worker.taskQueue, ['offers', ...args]);
    } finally {
      await worker.stop();
    }
  }

  const badLambda = (): LambdaProvider => new LambdaProvider({ apiKey: 'bad-key', baseUrl: lambdaUrl });

  it('lists the other clouds and names the refusing one, its reason and LAMBDA_API_KEY', async () => {
    const r = await offers([badLambda(), new FakeProvider()]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('fake-a');
    expect(r.out).toContain('4 offers');
    expect(r.err).toContain('lambda: skipped (Credentials)');
    expect(r.err).toContain(REASON);
    expect(r.err).toContain('fix: set valid credentials on the worker: LAMBDA_API_KEY');
    expect(r.err).not.toContain('Activity task failed');
    expect(r.out + r.err).not.toContain('bad-key');
  });

  it('with only the refusing cloud: exit 1 with the same reason (and one JSON object with --json)', async () => {
    const r = await offers([badLambda()]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(REASON);
    expect(r.err).toContain('LAMBDA_API_KEY');
    expect(r.err).not.toContain('Activity task failed');
    const j = await offers([badLambda()], '--json');
    expect(j.code).toBe(1);
    expect(j.out.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(j.out)).toMatchObject({
      ok: false,
      offers: [],
      skipped: [{ cloud: 'lambda', kind: 'Credentials', message: expect.stringContaining(REASON) }],
      error: { next: expect.stringContaining('LAMBDA_API_KEY') },
    });
  });

  it('a failure of the whole listing shows its reason, not "Activity task failed"', async () => {
    const r = await offers([new FakeProvider()], '--cloud', 'aws');
    expect(r.code).toBe(1);
    expect(r.err).toContain('cloud "aws" is not configured on this worker');
  });
});
