/**
 * Replays saved histories with the current workflow code: a change that would replay an existing
 * history differently (non-determinism) fails here. Histories are recorded by
 * `GPUPROV_RECORD_HISTORIES=1 npx vitest run test/replay` (scenarios in record.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { decodedHistoryText, findSecrets } from '../harness/secrets';

const dir = join(__dirname, '..', 'histories');
const files = readdirSync(dir).filter((f) => f.endsWith('.json'));

describe('saved histories', () => {
  it('include the single-attempt launch, the failover with compensation and the teardown', () => {
    expect(files).toEqual(expect.arrayContaining(['single-attempt.json', 'failover-compensated.json', 'teardown.json']));
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
