/** Scrapes a Prometheus text endpoint into samples, and picks values out of them. */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of Prometheus' text format (comments skipped). */
export function parsePrometheus(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

export async function scrape(address: string): Promise<Sample[]> {
  const res = await fetch(`http://${address}/metrics`);
  if (!res.ok) throw new Error(`GET /metrics: ${res.status}`);
  return parsePrometheus(await res.text());
}

/** Sum of the samples named `name` whose labels include `labels` (0 when none). */
export function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((a, s) => a + s.value, 0);
}

export const has = (samples: Sample[], name: string): boolean => samples.some((s) => s.name === name);
