import { describe, expect, it } from 'vitest';
import type { InstanceStatus, Owned, Preemption } from '../../../src/core/provider';
import type { OwnerVm } from '../../../src/core/watcher';
import { digestOf, viewSignature } from '../../../src/core/watcher-digest';

const NOTICE: Preemption = { noticeAt: '2026-01-01T12:00:00.000Z', deadline: '2026-01-01T12:02:00.000Z' };
const inst = (id: string, status: InstanceStatus = 'Running', preemption?: Preemption): Owned => ({
  id,
  vmName: 'a',
  status,
  location: { cloud: 'c', region: 'r' },
  ...(preemption ? { preemption } : {}),
});
const owner = (stage: OwnerVm['stage'] = 'ready'): OwnerVm => ({ workflowId: 'vm-a', vmName: 'a', stage });

describe('the watcher digest: a preemption is a loss at once', () => {
  it('a Ready VM whose running instance carries a notice is lost now, as preempted with notice and deadline', () => {
    const d = digestOf({ instances: [inst('i1', 'Running', NOTICE)], owners: [owner()] });
    expect(d.lost).toEqual([
      { vmName: 'a', workflowId: 'vm-a', instanceIds: ['i1'], cause: { kind: 'preempted', ...NOTICE, detail: 'i1 reclaimed by the cloud' } },
    ]);
  });
  it('an instance already reclaimed (stopped) with its preemption set is preempted, not stopped', () => {
    const d = digestOf({ instances: [inst('i1', 'Stopped', { noticeAt: NOTICE.noticeAt })], owners: [owner()] });
    expect(d.lost[0]?.cause.kind).toBe('preempted');
  });
  it('a replacement running beside the preempted instance keeps the VM alive, and is never unowned while it launches', () => {
    expect(digestOf({ instances: [inst('i1', 'Running', NOTICE), inst('i2')], owners: [owner()] }).lost).toEqual([]);
    const launching = digestOf({ instances: [inst('i1', 'Running', NOTICE), inst('i2', 'Pending')], owners: [owner('booting')] });
    expect(launching).toMatchObject({ lost: [], unowned: [] });
  });
  it('the notice changes the view signature, so a long-polling cycle returns at once', () => {
    const before = viewSignature({ instances: [inst('i1')], owners: [owner()] });
    expect(viewSignature({ instances: [inst('i1', 'Running', NOTICE)], owners: [owner()] })).not.toBe(before);
  });
  it('the digest stays small: only the cause, no whole observation', () => {
    const d = digestOf({ instances: [{ ...inst('i1', 'Running', NOTICE), endpoint: { host: 'h', port: 22 } }], owners: [owner()] });
    expect(JSON.stringify(d).length).toBeLessThan(400);
  });
});
