/** The ledger pages' pure parts: where a name lives, how a handover merges, what a page answers. */
import { describe, expect, it } from 'vitest';
import { LEDGER_PAGES, byPage, evidenceOf, ledgerPageId, mergeLedger, pageOf, summaryOf } from '../../../src/core/ledger-pages';

describe('ledger pages', () => {
  it('a name always lives in the same page; 10,000 names spread over every page, none holding twice its share', () => {
    // Fixed forever: a changed hash would hide recorded names from the sweep.
    expect(['gpu1', 'gpu2', 'train-a-0', 'x'].map(pageOf)).toEqual([12, 5, 10, 7]);
    const sizes = byPage(
      Array.from({ length: 10_000 }, (_, i) => `vm-${i}`),
      (n) => n,
    ).map(([, names]) => names.length);
    expect(sizes).toHaveLength(LEDGER_PAGES);
    expect(Math.max(...sizes)).toBeLessThan((2 * 10_000) / LEDGER_PAGES);
    expect(ledgerPageId('prod', 'aws', 'us-east-1', 7)).toBe('gpuprov-ledger:prod:aws:us-east-1:7');
  });

  it('a merge keeps the later times, joins the keys, and takes spot from the later record', () => {
    const page = [{ vmName: 'a', recordedAtMs: 10, seenAtMs: 50, createKeys: ['k1'], spot: true as const }];
    const merged = mergeLedger(page, [
      { vmName: 'a', recordedAtMs: 20, seenAtMs: 30, createKeys: ['k2'] },
      { vmName: 'b', recordedAtMs: 5, seenAtMs: 5 },
    ]);
    expect(merged).toEqual([
      { vmName: 'a', recordedAtMs: 20, seenAtMs: 50, createKeys: ['k1', 'k2'] },
      { vmName: 'b', recordedAtMs: 5, seenAtMs: 5 },
    ]);
  });

  it('a page answers its size, spot names and the names to ask about, and evidence only for names it holds', () => {
    const page = [
      { vmName: 'a', recordedAtMs: 0, seenAtMs: 0, createKeys: ['k1'] },
      { vmName: 'b', recordedAtMs: 90, seenAtMs: 90, spot: true as const },
    ];
    expect(summaryOf(page, 100, 100)).toEqual({ size: 2, spot: ['b'], expiring: ['a'] });
    expect(evidenceOf(page, ['a', 'b', 'c'])).toEqual([{ vmName: 'a', createKeys: ['k1'] }, { vmName: 'b' }]);
  });
});
