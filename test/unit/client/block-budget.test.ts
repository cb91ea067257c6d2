/**
 * `start --capacity-block OFFERING --yes --budget B` against the fake cloud's blocks for sale: an
 * upfront price above B is bad input (exit 2 naming --budget and the fix) before anything is
 * bought or started; within B the launch starts, buys the block once and waits for its window.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../../src/activities';
import { vmWorkflowId } from '../../../src/core/api';
import { ProviderRegistry } from '../../../src/providers/registry';
import { loadOrCreateSshIdentity } from '../../../src/ssh';
import { runTestCli, type CliResult } from '../../harness/cli';
import { FakeProvider } from '../../harness/fake-provider';
import { blockOnSale } from '../../harness/fake-reserved';
import { requireServer, startTestWorker, testEnv, type TestWorker } from '../../harness/temporal';

describe.skipIf(!requireServer())('start --capacity-block --budget', () => {
  let root: string;
  let worker: TestWorker;
  const fake = new FakeProvider({
    reserved: {
      forSale: [blockOnSale('cbo-700')],
    },
  });

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'gpuprov-block-budget-'));
    const ssh = await loadOrCreateSshIdentity(join(root, 'keys'));
    worker = await startTestWorker({ activities: createActivities({ registry: new ProviderRegistry([fake]), ssh, owner: 'default' }) });
  });
  afterAll(async () => {
    await worker?.stop();
    rmSync(root, { recursive: true, force: true });
  });
  const cli = (...args: string[]): Promise<CliResult> => runTestCli(root, worker.taskQueue, args);
  const startBlock = (name: string, budget: string, ...more: string[]): Promise<CliResult> =>
    cli('start', '--name', name, '--gpu', 'H100', '--capacity-block', 'cbo-700', '--yes', '--duration', '24h', '--budget', budget, ...more);
  const exists = async (name: string): Promise<boolean> =>
    (await testEnv().client()).workflow
      .getHandle(vmWorkflowId(name))
      .describe()
      .then(
        () => true,
        () => false,
      );

  it('a block above --budget: exit 2 naming --budget and the fix; nothing bought, no launch started', async () => {
    const name = `bb-${randomUUID().slice(0, 8)}`;
    const r = await startBlock(name, '500');
    expect(r.code, r.out + r.err).toBe(2);
    expect(r.err).toContain('--budget');
    expect(r.err).toContain('the capacity block costs $700 upfront, more than --budget $500');
    expect(r.err).toContain('raise --budget to at least 700');
    expect(r.err).toContain('provision offers --capacity-block --duration 24h');
    expect(fake.callsOf('buy')).toHaveLength(0);
    expect(await exists(name)).toBe(false);

    const j = await startBlock(name, '500', '--json');
    expect(j.code).toBe(2);
    expect(JSON.parse(j.out)).toMatchObject({ ok: false, error: { kind: 'InvalidInput', field: '--budget' } });
    expect(fake.callsOf('buy')).toHaveLength(0);
  });

  it('within --budget: the launch starts, buys the block once and waits for its window; down ends it', async () => {
    const name = `bb-${randomUUID().slice(0, 8)}`;
    const r = await startBlock(name, '800', '--detach');
    expect(r.code, r.out + r.err).toBe(0);
    let stage = '';
    for (let i = 0; i < 200 && stage !== 'waiting-window'; i++) {
      const s = await cli('status', name, '--json');
      stage = (JSON.parse(s.out) as { stage?: string }).stage ?? '';
      if (stage !== 'waiting-window') await new Promise((res) => setTimeout(res, 250));
    }
    expect(stage).toBe('waiting-window');
    expect(fake.callsOf('buy')).toHaveLength(1);
    expect(fake.callsOf('create')).toHaveLength(0);
    const down = await cli('down', name);
    expect(down.code, down.out + down.err).toBe(0);
  });
});
