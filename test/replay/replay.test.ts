/**
 * Replays saved histories with the current workflow code: a change that would replay an existing
 * history differently (non-determinism) fails here. Histories are recorded by
 * `GPUPROV_RECORD_HISTORIES=1 npx vitest run test/replay/record.test.ts` (scenarios there). Each
 * scenario history is checked to exercise what its name claims (claims.ts), and a workflow whose
 * command sequence changed must fail to replay one.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { describe, expect, it } from 'vitest';
import { decodedHistoryText, findSecrets } from '../harness/secrets';
import { CLAIMS } from './claims';
import { HISTORY_DIR as dir, activityTypes as activitiesOf, attributesOf, historyFiles, readHistory, workflowTypeOf } from './history-file';

const files = historyFiles();

const SCENARIOS = ['single-attempt', 'failover-compensated', 'teardown'];
const activityTypes = (file: string): string[] => activitiesOf(readHistory(file));
const loadHistory = (file: string) => historyFromJSON(JSON.parse(readFileSync(join(dir, file), 'utf8')));

describe('saved histories', () => {
  it('include the single-attempt launch, the failover with compensation and the teardown', () => {
    expect(files).toEqual(expect.arrayContaining(SCENARIOS.map((s) => `${s}.json`)));
  });

  it.each(SCENARIOS)('%s: one prepareAndCreate per attempt, one releaseAt per release', (s) => {
    const acts = activityTypes(`${s}.json`);
    expect(acts).toContain('releaseAt');
    if (s !== 'teardown') expect(acts).toContain('prepareAndCreate');
  });

  it('every history replays without a determinism error (one bundle for all)', async () => {
    const histories = files.map((file) => ({ workflowId: file, history: loadHistory(file) }));
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

describe('scenario histories exercise what they claim', () => {
  it('every saved history is a basic scenario or has a claim', () => {
    const claimed = CLAIMS.map((c) => c.file);
    expect(files).toEqual(expect.arrayContaining(claimed));
    expect(files.filter((f) => !claimed.includes(f) && !SCENARIOS.some((s) => f === `${s}.json`))).toEqual([]);
  });

  it.each(CLAIMS.map((c) => [c.file, c.says, c] as const))('%s: %s', (file, _says, claim) => {
    claim.check(readHistory(file));
  });

  it('continue-as-new.run2.json is the run that continue-as-new.run1.json continued as', () => {
    const run1 = readHistory('continue-as-new.run1.json').events;
    const run2 = attributesOf(readHistory('continue-as-new.run2.json').events[0]!);
    expect(run2.continuedExecutionRunId).toBe(attributesOf(run1[0]!).originalExecutionRunId);
    expect(run2.originalExecutionRunId).toBe(attributesOf(run1.at(-1)!).newExecutionRunId);
  });
});

describe('a changed command sequence does not replay', () => {
  // Every history that starts with a launch (vm) or a fleet's first reconcile: a run continued as
  // new may open with a timer itself, which the extra timer would match.
  const fresh = files.filter(
    (f) => attributesOf(readHistory(f).events[0]!).continuedExecutionRunId === undefined && workflowTypeOf(readHistory(f)) !== 'teardownWorkflow',
  );

  it('vmWorkflow and fleetWorkflow with a timer before their first command fail every fresh history with a DeterminismViolationError', async () => {
    expect(fresh).toEqual(expect.arrayContaining(['single-attempt.json', 'k3s-push.json', 'fleet-scale.json', 'continue-as-new.run1.json']));
    const histories = fresh.map((file) => ({ workflowId: file, history: loadHistory(file) }));
    const results = Worker.runReplayHistories({ workflowsPath: join(__dirname, 'altered-workflows.ts') }, histories);
    const failed: string[] = [];
    for await (const r of results) {
      expect(r.error, r.workflowId).toBeInstanceOf(DeterminismViolationError);
      failed.push(r.workflowId);
    }
    expect(failed.sort()).toEqual(fresh);
  });
});

describe('the secret scanner can fail', () => {
  it('finds key material in a history-shaped payload', () => {
    const leaked = JSON.stringify({
      events: [{ payload: { data: Buffer.from('-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA').toString('base64') } }],
    });
    expect(findSecrets(decodedHistoryText(leaked))).toEqual(expect.arrayContaining(['PEM private key', 'OpenSSH private key body']));
  });
});
