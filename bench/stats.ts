/** Small statistics helpers for the benchmarks (nearest-rank percentiles). */

export interface Dist {
  n: number;
  median: number;
  p90: number;
  min: number;
  max: number;
}

export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * s.length);
  return s[Math.min(s.length, Math.max(1, rank)) - 1]!;
}

export function dist(xs: number[]): Dist {
  return { n: xs.length, median: percentile(xs, 50), p90: percentile(xs, 90), min: Math.min(...xs), max: Math.max(...xs) };
}

export const round = (x: number, digits = 0): number => {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
};

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** `look` every 100 ms until it gives a value (a throw counts as none), at most `looks` times; else throws naming `what`. */
export async function until<T>(look: () => Promise<T | undefined>, what: string, looks: number): Promise<T> {
  for (let i = 0; i < looks; i++) {
    const v = await look().catch(() => undefined);
    if (v !== undefined) return v;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Temporal retry delay before attempt `n + 1` (n ≥ 1) for an exponential policy. */
export function retryDelay(initialMs: number, coefficient: number, maxMs: number, n: number): number {
  return Math.min(maxMs, initialMs * coefficient ** (n - 1));
}
