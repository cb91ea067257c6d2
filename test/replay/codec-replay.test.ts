/**
 * Turning the payload codec on does not strand old histories: the saved (plain) histories replay
 * with the codec in the data converter, since it passes unencrypted payloads through on decode.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { codecOption } from '../../src/codec';
import { HISTORY_DIR as dir } from './history-file';

const FILES = ['single-attempt.json', 'failover-compensated.json', 'teardown.json'];

describe('saved plain histories with the codec on', () => {
  it('replay without error', async () => {
    const { dataConverter } = codecOption({ GPUPROV_CODEC_KEYS: `k1=${randomBytes(32).toString('base64')}` });
    expect(dataConverter).toBeDefined();
    const histories = FILES.map((file) => ({ workflowId: file, history: historyFromJSON(JSON.parse(readFileSync(join(dir, file), 'utf8'))) }));
    const results = Worker.runReplayHistories({ workflowsPath: join(__dirname, '..', '..', 'src', 'workflows', 'index.ts'), dataConverter }, histories);
    const seen: string[] = [];
    for await (const r of results) {
      seen.push(r.workflowId);
      expect(r.error, `${r.workflowId}: ${String(r.error)}`).toBeUndefined();
    }
    expect(seen.sort()).toEqual([...FILES].sort());
  });
});
