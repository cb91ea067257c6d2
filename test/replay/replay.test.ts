/**
 * Replays saved histories with the current workflow code: a change that would replay an existing
 * history differently (non-determinism) fails here. Histories are recorded by
 * `GPUPROV_RECORD_HISTORIES=1 npx vitest run test/replay` (scenarios in record.test.ts); the
 * `*.pre-patch.json` ones were recorded before CLOUD_CALLS_PATCH and replay its old branch.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { decodedHistoryText, findSecrets } from '../harness/secrets';

const dir = join(__dirname, '..', 'histories');
const files = readdirSync(dir).filter((f) => f.endsWith('.json'));

const SCENARIOS = ['single-attempt', 'failover-compensated', 'teardown'];
const activityTypes = (file: string): string[] =>
  (JSON.parse(readFileSync(join(dir, file), 'utf8')) as { events: { activityTaskScheduledEventAttributes?: { activityType: { name: string } } }[] }).events.flatMap((e) => (e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.activityType.name] : []));

describe('saved histories', () => {
  it('include the single-attempt launch, the failover with compensation and the teardown, recorded before and after CLOUD_CALLS_PATCH', () => {
    expect(files).toEqual(expect.arrayContaining(SCENARIOS.flatMap((s) => [`${s}.json`, `${s}.pre-patch.json`])));
  });

  it.each(SCENARIOS)('%s: the pre-patch history runs the single-step cloud calls, the current one the merged calls', (s) => {
    const before = activityTypes(`${s}.pre-patch.json`);
    const after = activityTypes(`${s}.json`);
    expect(before).toContain('deleteInstances');
    expect(before).not.toContain('releaseAt');
    expect(after).toContain('releaseAt');
    expect(after).not.toContain('deleteInstances');
    if (s !== 'teardown') {
      expect(before).toEqual(expect.arrayContaining(['prepareOffer', 'createInstance']));
      expect(after).toContain('prepareAndCreate');
      expect(after).not.toContain('prepareOffer');
    }
  });

  it('every history replays without a determinism error (one bundle for all)', async () => {
    const histories = files.map((file) => ({ workflowId: file, history: historyFromJSON(JSON.parse(readFileSync(join(dir, file), 'utf8'))) }));
    const results = Worker.runReplayHistories({ workflowsPath: join(__dirname, '..', '..', 'src', 'workflows', 'index.ts') }, histories);
    const seen: string[] = [];
    for await (const r of results) {
      seen.push(r.workflowId);
      expect(r.error, `${r.workflowId}: ${String(r.error)}`).toBeUndefined();
    }
    expect(seen.sort()).toEqual([...files].sort());
  });

  it.each(files)('%s holds no secret', (file) => {
    expect(findSecrets(decodedHistoryText(readFileSync(join(dir, file), 'utf8')))).toEqual([]);
  });
});

describe('the secret scanner can fail', () => {
  it('finds key material in a history-shaped payload', () => {
    const leaked = JSON.stringify({ events: [{ payload: { data: Buffer.from('-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA').toString('base64') } }] });
    expect(findSecrets(decodedHistoryText(leaked))).toEqual(expect.arrayContaining(['PEM private key', 'OpenSSH private key body']));
  });
});
