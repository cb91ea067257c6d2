/** `vmReady` on a slot already up (src/core/fleet/fold.ts): the child replaced its preempted instance. */
import { describe, expect, it } from 'vitest';
import { decideSlot } from '../../../../src/core/fleet/reconcile';
import { fold, type FleetState, type SlotRecord } from '../../../../src/core/fleet/state';
import type { SlotTemplate } from '../../../../src/core/fleet/types';
import { T, rec } from './fixtures';

const OLD = { host: '10.0.0.1', port: 22 };
const NEW = { host: '10.0.0.2', port: 22 };
const state = (r: SlotRecord): FleetState => ({ name: 'f', observedGeneration: 1, nextAttempt: 2, nextOpSeq: 1, slots: { [r.slot]: r } });
const ready = (endpoint = NEW, hostKey?: string) => ({ type: 'vmReady' as const, slot: 'f-web-0', attempt: 1, endpoint, ...(hostKey ? { hostKey } : {}) });

describe('a slot whose VM is up hears vmReady again', () => {
  it('at the same endpoint: stale, nothing changes', () => {
    const s = state(rec({ endpoint: OLD }));
    expect(fold(s, ready(OLD), 5, T)).toBe(s);
  });

  it('at another endpoint: the same attempt, still ready, on the new endpoint and host key', () => {
    const s = fold(state(rec({ endpoint: OLD, hostKey: 'ssh-ed25519 OLD' })), ready(NEW, 'ssh-ed25519 NEW'), 5, T);
    expect(s.slots['f-web-0']).toMatchObject({ attempt: 1, vm: 'up', ready: true, stage: 'ready', endpoint: NEW, hostKey: 'ssh-ed25519 NEW' });
  });

  it('a bootstrap slot bootstraps again on the new VM; the old bootstrap op is dropped, so its late answer is stale', () => {
    const template: SlotTemplate = { role: 'web', vm: {}, bootstrap: { verify: [], start: 'serve', ready: { command: 'true' }, timeout: 60 } };
    const booted = rec({ template, endpoint: OLD, boot: { state: 'running', started: true }, pending: { op: 'startBootstrap', seq: 3, since: 0 } });
    const s = fold(state(booted), ready(NEW), 5, T);
    const r = s.slots['f-web-0']!;
    expect(r).toMatchObject({ vm: 'up', ready: false, stage: 'launching', endpoint: NEW, boot: { state: 'none', started: false } });
    expect(r.pending).toBeUndefined();
    expect(fold(s, { type: 'bootDone', slot: 'f-web-0', attempt: 1, ok: true, stage: 'ready' }, 6, T)).toBe(s);
    expect(decideSlot(r, { slot: r.slot, group: r.group, index: r.index, template: r.template, key: r.key }, 6)).toMatchObject({ row: 14 });
  });
});
