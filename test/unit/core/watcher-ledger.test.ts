import { describe, expect, it } from 'vitest';
import { KEYS_KEPT, keepLedger, recordCreates, recordedKeys, recordedNames } from '../../../src/core/watcher-ledger';

const t = { ledgerKeepMs: 60_000 };
const none = { instances: [], owners: [] };

describe('the watcher ledger', () => {
  it('a recorded name stays while anything of it is listed, and is forgotten ledgerKeepMs after the last sight', () => {
    let ledger = recordCreates([], ['gpu1', 'gpu2'], 0);
    expect([...recordedNames(ledger)].sort()).toEqual(['gpu1', 'gpu2']);
    // gpu1 runs for a long while; gpu2 never showed up (its create failed)
    for (let now = 10_000; now <= 300_000; now += 10_000) ledger = keepLedger(ledger, { instances: [{ vmName: 'gpu1' }], owners: [] }, now, t);
    expect([...recordedNames(ledger)]).toEqual(['gpu1']);
    ledger = keepLedger(ledger, none, 300_000 + 59_999, t);
    expect([...recordedNames(ledger)]).toEqual(['gpu1']);
    ledger = keepLedger(ledger, none, 300_000 + 60_000, t);
    expect(ledger).toEqual([]);
  });

  it('side resources and open owners count as sightings; recording again refreshes, without duplicates', () => {
    let ledger = recordCreates([], ['a', 'b'], 0);
    ledger = keepLedger(ledger, { instances: [], sides: [{ vmName: 'a' }], owners: [{ vmName: 'b' }] }, 59_000, t);
    ledger = keepLedger(ledger, none, 100_000, t);
    expect(ledger.map((e) => e.vmName).sort()).toEqual(['a', 'b']);
    ledger = recordCreates(ledger, ['a', 'a'], 120_000);
    expect(ledger.filter((e) => e.vmName === 'a')).toEqual([{ vmName: 'a', recordedAtMs: 120_000, seenAtMs: 120_000 }]);
  });

  it('create keys join their name (kept across sightings and re-records, latest KEYS_KEPT); names without keys have none', () => {
    let ledger = recordCreates([], ['gpu1'], 0, [{ vmName: 'gpu1', createKey: 'k1' }]);
    ledger = recordCreates(ledger, ['gpu2'], 1_000);
    ledger = keepLedger(ledger, { instances: [{ vmName: 'gpu1' }], owners: [] }, 2_000, t);
    ledger = recordCreates(ledger, ['gpu1'], 3_000, [{ vmName: 'gpu1', createKey: 'k2' }]);
    ledger = recordCreates(ledger, ['gpu1'], 4_000);
    expect(recordedKeys(ledger)).toEqual(new Map([['gpu1', new Set(['k1', 'k2'])]]));
    const many = Array.from({ length: KEYS_KEPT + 3 }, (_, i) => ({ vmName: 'gpu1', createKey: `m${i}` }));
    ledger = recordCreates(ledger, [], 5_000, many);
    const kept = ledger.find((e) => e.vmName === 'gpu1')?.createKeys ?? [];
    expect(kept).toHaveLength(KEYS_KEPT);
    expect(kept[kept.length - 1]).toBe(`m${KEYS_KEPT + 2}`);
  });
});
