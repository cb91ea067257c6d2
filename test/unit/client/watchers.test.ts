import { describe, expect, it } from 'vitest';
import type { VmListing } from '../../../src/client/client';
import { withOrphans } from '../../../src/client/watchers';
import type { WatcherState } from '../../../src/core/watcher-api';

const row = (name: string, stage: string, execution: string, startedAt = '2026-12-01T10:00:00.000Z'): VmListing => ({
  name,
  workflowId: `vm-${name}`,
  stage,
  execution,
  startedAt,
  cloud: 'local',
  region: 'local-a',
});
const watcher = (w: Partial<WatcherState>): WatcherState => ({
  deployment: 'default',
  cloud: 'local',
  region: 'local-a',
  cycles: 1,
  looks: 1,
  fast: false,
  instances: 0,
  owners: 0,
  orphans: [],
  sweeps: [],
  ...w,
});
const sweep = (vmName: string, sweptAt: string, ok = true): WatcherState['sweeps'][number] => ({
  vmName,
  instanceIds: ['i-1'],
  firstSeenAt: '2026-12-01T10:01:00.000Z',
  sweptAt,
  by: 'grace',
  ok,
});

describe('withOrphans (list --all)', () => {
  it('a VM whose workflow was cut short says what became of its instance: orphan, swept (after its start), or not seen', () => {
    const w = watcher({
      orphans: [{ vmName: 'orph', instanceIds: ['i-9'], firstSeenAt: '2026-12-01T10:05:00.000Z', deleteAfter: '2026-12-01T10:15:00.000Z' }],
      sweeps: [sweep('gone', '2026-12-01T10:11:00.000Z'), sweep('old', '2026-12-01T09:00:00.000Z'), sweep('failed', '2026-12-01T10:11:00.000Z', false)],
    });
    const rows = withOrphans(
      [
        row('orph', 'ready', 'TERMINATED'),
        row('gone', 'booting', 'TIMED_OUT'),
        row('old', 'ready', 'TERMINATED'),
        row('failed', 'ready', 'TERMINATED'),
        row('done', 'terminated', 'TERMINATED'),
        row('live', 'ready', 'RUNNING'),
        row('fine', 'terminated', 'COMPLETED'),
      ],
      [w],
    );
    expect(rows.map((r) => [r.name, r.stage, r.instance?.state ?? '-', r.instance?.sweptAt ?? '-'])).toEqual([
      ['orph', 'ready', 'orphan', '-'],
      ['gone', 'booting', 'swept', '2026-12-01T10:11:00.000Z'],
      ['old', 'ready', 'not seen', '-'],
      ['failed', 'ready', 'not seen', '-'],
      ['done', 'terminated', '-', '-'],
      ['live', 'ready', '-', '-'],
      ['fine', 'terminated', '-', '-'],
      ['orph', 'orphan', '-', '-'],
    ]);
  });

  it("another region's watcher says nothing of a VM placed elsewhere", () => {
    const w = watcher({ region: 'local-b', sweeps: [sweep('x', '2026-12-01T10:11:00.000Z')] });
    expect(withOrphans([row('x', 'ready', 'TERMINATED')], [w])[0]!.instance).toEqual({ state: 'not seen' });
  });
});
