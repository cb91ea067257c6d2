import { describe, expect, it } from 'vitest';
import type { Owned } from '../../../src/core/provider';
import type { CycleView } from '../../../src/core/watcher';
import { digestOf } from '../../../src/core/watcher-digest';
import {
  EXPIRING_ASKED,
  expiringOf,
  KEYS_KEPT,
  keepLedger,
  recordCreates,
  spotNamesOf,
  recordedKeys,
  recordedNames,
  type LedgerEntry,
} from '../../../src/core/watcher-ledger';

const t = { ledgerKeepMs: 60_000 };
const none = { instances: [], owners: [] };
const listed = (vmName: string): Owned => ({ id: `i-${vmName}`, vmName, status: 'Running', location: { cloud: 'c', region: 'r' } });
const open = (vmName: string) => ({ workflowId: `vm-${vmName}`, vmName, stage: 'ready' as const });

/** One watcher cycle as it keeps the ledger: ask about the expiring names, digest the look, keep what was seen. */
function keepLedgerAfter(
  ledger: LedgerEntry[],
  view: { instances: Owned[]; owners: CycleView['owners']; sides?: CycleView['sides'] },
  nowMs: number,
): LedgerEntry[] {
  const expiring = expiringOf(ledger, nowMs, t);
  const d = digestOf(view, expiring);
  return keepLedger(ledger, new Set([...d.present, ...d.unowned.map((u) => u.vmName)]), new Set(expiring), nowMs, t);
}

describe('the watcher ledger', () => {
  it('a recorded name stays while anything of it is listed, and is forgotten ledgerKeepMs after the last sight', () => {
    let ledger = recordCreates([], ['gpu1', 'gpu2'], 0);
    expect([...recordedNames(ledger)].sort()).toEqual(['gpu1', 'gpu2']);
    // gpu1 runs for a long while; gpu2 never showed up (its create failed)
    for (let now = 10_000; now <= 300_000; now += 10_000) ledger = keepLedgerAfter(ledger, { instances: [listed('gpu1')], owners: [] }, now);
    expect([...recordedNames(ledger)]).toEqual(['gpu1']);
    ledger = keepLedgerAfter(ledger, none, 300_000 + 59_999);
    expect([...recordedNames(ledger)]).toEqual(['gpu1']);
    ledger = keepLedgerAfter(ledger, none, 300_000 + 60_000);
    expect(ledger).toEqual([]);
  });

  it('side resources and open owners count as sightings; recording again refreshes, without duplicates', () => {
    let ledger = recordCreates([], ['a', 'b'], 0);
    ledger = keepLedgerAfter(ledger, { instances: [], sides: [{ vmName: 'a', kind: 'security-group', id: 'sg-1' }], owners: [open('b')] }, 59_000);
    ledger = keepLedgerAfter(ledger, none, 100_000);
    expect(ledger.map((e) => e.vmName).sort()).toEqual(['a', 'b']);
    ledger = recordCreates(ledger, ['a', 'a'], 120_000);
    expect(ledger.filter((e) => e.vmName === 'a')).toEqual([{ vmName: 'a', recordedAtMs: 120_000, seenAtMs: 120_000 }]);
  });

  it('create keys join their name (kept across sightings and re-records, latest KEYS_KEPT); names without keys have none', () => {
    let ledger = recordCreates([], ['gpu1'], 0, [{ vmName: 'gpu1', createKey: 'k1' }]);
    ledger = recordCreates(ledger, ['gpu2'], 1_000);
    ledger = keepLedgerAfter(ledger, { instances: [listed('gpu1')], owners: [] }, 2_000);
    ledger = recordCreates(ledger, ['gpu1'], 3_000, [{ vmName: 'gpu1', createKey: 'k2' }]);
    ledger = recordCreates(ledger, ['gpu1'], 4_000);
    expect(recordedKeys(ledger)).toEqual(new Map([['gpu1', new Set(['k1', 'k2'])]]));
    const many = Array.from({ length: KEYS_KEPT + 3 }, (_, i) => ({ vmName: 'gpu1', createKey: `m${i}` }));
    ledger = recordCreates(ledger, [], 5_000, many);
    const kept = ledger.find((e) => e.vmName === 'gpu1')?.createKeys ?? [];
    expect(kept).toHaveLength(KEYS_KEPT);
    expect(kept[kept.length - 1]).toBe(`m${KEYS_KEPT + 2}`);
  });

  it('the latest create with a key says whether the name is on spot; a Ready record (no key) keeps it', () => {
    let ledger = recordCreates(
      [],
      [],
      0,
      [
        { vmName: 'a', createKey: 'k1' },
        { vmName: 'b', createKey: 'k2' },
      ],
      ['a'],
    );
    expect(spotNamesOf(ledger)).toEqual(['a']);
    ledger = recordCreates(ledger, ['a'], 1);
    expect(spotNamesOf(ledger)).toEqual(['a']);
    // --spot auto fell back to on-demand: the relaunch's create clears it.
    ledger = recordCreates(ledger, [], 2, [{ vmName: 'a', createKey: 'k3' }]);
    expect(spotNamesOf(ledger)).toEqual([]);
  });

  it('a cycle asks only about names unseen for half ledgerKeepMs, the longest unseen first, at most EXPIRING_ASKED; a name not asked is never forgotten', () => {
    const names = Array.from({ length: EXPIRING_ASKED + 50 }, (_, i) => `vm-${i}`);
    let ledger = names.reduce<LedgerEntry[]>((l, n, i) => recordCreates(l, [n], i), []);
    expect(expiringOf(ledger, 29_000, t)).toEqual([]);
    const asked = expiringOf(ledger, 30_000 + EXPIRING_ASKED + 50, t);
    expect(asked).toHaveLength(EXPIRING_ASKED);
    expect(asked[0]).toBe('vm-0');
    // Long past the keep, none of them listed: only the asked ones are forgotten this cycle.
    ledger = keepLedger(ledger, new Set(), new Set(asked), 1_000_000, t);
    expect(ledger.map((e) => e.vmName)).toEqual(names.slice(EXPIRING_ASKED));
  });

  it('an owned name is kept by answering the question, not by listing the whole view', () => {
    let ledger = recordCreates([], ['gpu1'], 0);
    for (let now = 10_000; now <= 600_000; now += 10_000) ledger = keepLedgerAfter(ledger, { instances: [], owners: [open('gpu1')] }, now);
    expect(ledger.map((e) => e.vmName)).toEqual(['gpu1']);
  });
});
