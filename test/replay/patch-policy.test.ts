/**
 * The patch policy (docs/ARCHITECTURE.md, "Patches"): every id of src/core/patches.ts is dated,
 * not past its retirement, and replayed on both branches by the saved histories (one history
 * with its marker, one without); and no saved history carries a marker of an id not in the table.
 */
import { describe, expect, it } from 'vitest';
import { PATCHES, type PatchEntry } from '../../src/core/patches';
import { historyFiles, patchIds, readHistory } from './history-file';

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

const validDate = (d: string): boolean =>
  ISO_DATE.test(d) && !Number.isNaN(Date.parse(`${d}T00:00:00Z`)) && new Date(`${d}T00:00:00Z`).toISOString().startsWith(d);

/**
 * What is wrong with `table` on `today` (YYYY-MM-DD), given the patch markers of each saved
 * history (`markers[i]`: the ids history i recorded). Empty: the policy holds.
 */
export function patchProblems(table: Record<string, PatchEntry>, today: string, markers: string[][]): string[] {
  const problems: string[] = [];
  for (const [id, e] of Object.entries(table)) {
    if (!validDate(e.arrived) || !validDate(e.retireAfter)) problems.push(`${id}: dates must be ISO YYYY-MM-DD`);
    else if (e.retireAfter <= e.arrived) problems.push(`${id}: retireAfter must be later than arrived`);
    else if (today > e.retireAfter) problems.push(`${id}: due to be retired since ${e.retireAfter} (keep the new branch, delete the old one and the entry)`);
    if (!e.why.trim()) problems.push(`${id}: says nothing about why`);
    if (!markers.some((m) => m.includes(id))) problems.push(`${id}: no saved history replays its new branch (record one with the patch)`);
    if (!markers.some((m) => !m.includes(id))) problems.push(`${id}: no saved history replays its old branch (keep one recorded before the patch)`);
  }
  for (const id of new Set(markers.flat()))
    if (!(id in table)) problems.push(`${id}: a saved history carries this marker, but src/core/patches.ts has no such id`);
  return problems;
}

const today = new Date().toISOString().slice(0, 10);
const markers = historyFiles().map((f) => patchIds(readHistory(f)));

describe('the patch policy', () => {
  it('holds for src/core/patches.ts and the saved histories', () => {
    expect(markers.length).toBeGreaterThan(0);
    expect(patchProblems(PATCHES as Record<string, PatchEntry>, today, markers)).toEqual([]);
  });

  describe('can fail', () => {
    const entry: PatchEntry = { arrived: '2026-01-10', retireAfter: '2026-07-10', why: 'a new command' };
    const both = [['gpuprov-x-v1'], []];

    it('passes a dated patch replayed on both branches', () => {
      expect(patchProblems({ 'gpuprov-x-v1': entry }, '2026-03-01', both)).toEqual([]);
    });
    it('fails a patch past its retirement', () => {
      expect(patchProblems({ 'gpuprov-x-v1': entry }, '2026-07-11', both)).toEqual([expect.stringContaining('due to be retired')]);
    });
    it('fails dates that are not ISO or not in order', () => {
      expect(patchProblems({ 'gpuprov-x-v1': { ...entry, arrived: '10/01/2026' } }, '2026-03-01', both)).toEqual([expect.stringContaining('ISO')]);
      expect(patchProblems({ 'gpuprov-x-v1': { ...entry, retireAfter: '2026-02-30' } }, '2026-03-01', both)).toEqual([expect.stringContaining('ISO')]);
      expect(patchProblems({ 'gpuprov-x-v1': { ...entry, retireAfter: entry.arrived } }, '2026-03-01', both)).toEqual([expect.stringContaining('later than')]);
    });
    it('fails a patch whose new or old branch no saved history replays', () => {
      expect(patchProblems({ 'gpuprov-x-v1': entry }, '2026-03-01', [[]])).toEqual([expect.stringContaining('new branch')]);
      expect(patchProblems({ 'gpuprov-x-v1': entry }, '2026-03-01', [['gpuprov-x-v1']])).toEqual([expect.stringContaining('old branch')]);
    });
    it('fails a marker of an id the table does not have', () => {
      expect(patchProblems({}, '2026-03-01', [['gpuprov-gone-v1']])).toEqual([expect.stringContaining('no such id')]);
    });
  });
});
