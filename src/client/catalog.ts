/**
 * "Did you mean": the CLI's spelling help for cloud, region, GPU and flag names. What the CLI
 * knows about each cloud (names, regions, k3s, credentials) is the cloud table, src/core/clouds.ts.
 */

/** Levenshtein distance, for "did you mean". */
export function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
  }
  return d[a.length]![b.length]!;
}

export function didYouMean(s: string, options: readonly string[]): string | undefined {
  const best = [...options].sort((x, y) => distance(s, x) - distance(s, y))[0];
  return best !== undefined && distance(s, best) <= Math.max(2, Math.floor(best.length / 3)) ? best : undefined;
}
