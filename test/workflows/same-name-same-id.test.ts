/**
 * Two installs that share one deployment id on purpose, on one local-cloud root, create `gpu1` in
 * one region at the same moment: both pass the NameTaken check (neither instance existed yet; the
 * second install's first look is made to find nothing), so two instances carry the same name and
 * tag. Tearing the first down deletes only its own (by create key); the second stays Ready and
 * Running, and its own teardown then leaves nothing.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../src/activities';
import { loadOrCreateSshIdentity } from '../../src/ssh';
import { LocalProvider, countLive } from '../../src/providers/local';
import { ProviderRegistry } from '../../src/providers/registry';
import type { Location, Observed } from '../../src/core/provider';
import type { vmWorkflow } from '../../src/workflows';
import { statusQuery, teardownSignal } from '../../src/core/api';
import { requireServer, requireTool, startTestWorker, type TestWorker, testEnv } from '../harness/temporal';
import { FAST, waitStage } from './helpers';

const haveSshd = existsSync('/usr/sbin/sshd');
const AT = { cloud: 'local', region: 'local-a' };
const SHARED = 'shared-on-purpose';

/** The second install: its first look at `gpu1` comes before the first install's instance exists. */
class RacedProvider extends LocalProvider {
  private looked = false;
  override async observe(at: Location, vmName: string): Promise<Observed[]> {
    if (!this.looked) {
      this.looked = true;
      return [];
    }
    return super.observe(at, vmName);
  }
}

describe.skipIf(!requireServer() || !requireTool('sshd', haveSshd, 'apt-get install -y openssh-server'))(
  'two installs with one deployment id, one name at once',
  () => {
    let root: string;
    const workers: TestWorker[] = [];
    let plain: LocalProvider;

    beforeAll(async () => {
      root = mkdtempSync(join(tmpdir(), 'gpuprov-same-name-'));
      plain = new LocalProvider({ root, deployment: SHARED });
      for (const raced of [false, true]) {
        const ssh = await loadOrCreateSshIdentity(join(root, `keys-${raced ? 'b' : 'a'}`));
        const provider = raced ? new RacedProvider({ root, deployment: SHARED }) : new LocalProvider({ root, deployment: SHARED });
        workers.push(await startTestWorker({ activities: createActivities({ registry: new ProviderRegistry([provider]), ssh, owner: SHARED }) }));
      }
    });
    afterAll(async () => {
      for (const w of workers) await w.stop();
      await plain.delete(AT, 'gpu1', []).catch(() => undefined);
      rmSync(root, { recursive: true, force: true });
    });

    it("the first install's teardown leaves the second's instance running", async () => {
      const client = await testEnv().client();
      const start = (w: TestWorker, who: string) =>
        client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
          taskQueue: w.taskQueue,
          workflowId: `vm-gpu1-${who}-${Date.now()}`,
          args: [{ spec: { name: 'gpu1', regions: ['local-a'] }, tuning: FAST }],
        });
      const a = await start(workers[0]!, 'a');
      await waitStage(a, 'ready', 60_000);
      // The second install's create: its NameTaken check saw nothing, so it makes a second gpu1.
      const b = await start(workers[1]!, 'b');
      const bReady = await waitStage(b, 'ready', 60_000);
      expect(countLive(root)).toBe(2);
      const both = await plain.observe(AT, 'gpu1');
      expect(new Set(both.map((o) => o.createKey)).size).toBe(2);

      await a.signal(teardownSignal);
      expect((await a.result()).stage).toBe('terminated');
      expect(countLive(root)).toBe(1);
      const left = await plain.observe(AT, 'gpu1');
      expect(left.map((o) => [o.id, o.status])).toEqual([[bReady.instanceIds[0], 'Running']]);
      expect((await b.query(statusQuery)).stage).toBe('ready');

      await b.signal(teardownSignal);
      expect((await b.result()).stage).toBe('terminated');
      expect(countLive(root)).toBe(0);
      expect(await plain.observe(AT, 'gpu1')).toEqual([]);
    });
  },
);
