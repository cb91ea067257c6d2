/**
 * The SDK core's own worker metrics, scraped from the Prometheus endpoint the lab's runtime
 * serves (`startLab({ metrics: true })`): workflow-task execution latencies by workflow type, and
 * the workflow cache's forced evictions, hits and misses. Durations are in ms (the core's default
 * for Prometheus). Counters are cumulative: a phase is `minusCore(after, before)`.
 */

/**
 * Per workflow type: tasks executed and their summed time. (The core's replay latency is left out:
 * it is recorded for every task, replaying or not, so it counts no replays.)
 */
export interface CoreTasks {
  executed: number;
  executedMs: number;
  /** Executed tasks that took over 100 ms (from the histogram's buckets; the nearest bucket edge at or above 100). */
  executedOver100Ms: number;
}

export interface CoreMetrics {
  byType: Record<string, CoreTasks>;
  forcedEvictions: number;
  cacheHits: number;
  cacheMisses: number;
}

const LINE = /^temporal_([a-z_]+?)(_bucket|_sum|_count)?\{([^}]*)\}\s+([0-9.eE+-]+)$/;

function labelsOf(s: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of s.matchAll(/([a-z_]+)="([^"]*)"/g)) out[m[1]!] = m[2]!;
  return out;
}

/** Parses the endpoint's text; unknown series are ignored. */
export function parseCore(text: string): CoreMetrics {
  const out: CoreMetrics = { byType: {}, forcedEvictions: 0, cacheHits: 0, cacheMisses: 0 };
  const of = (t: string): CoreTasks => (out.byType[t] ??= { executed: 0, executedMs: 0, executedOver100Ms: 0 });
  // Per type, the cumulative count at the first bucket edge ≥ 100 ms.
  const under: Record<string, { le: number; n: number }> = {};
  for (const line of text.split('\n')) {
    const m = LINE.exec(line.trim());
    if (!m) continue;
    const [, name, part, rawLabels, rawValue] = m;
    const labels = labelsOf(rawLabels!);
    const v = Number(rawValue);
    const type = labels.workflow_type;
    if (name === 'sticky_cache_total_forced_eviction') out.forcedEvictions += v;
    else if (name === 'sticky_cache_hit') out.cacheHits += v;
    else if (name === 'sticky_cache_miss') out.cacheMisses += v;
    else if (type && name === 'workflow_task_execution_latency') {
      if (part === '_count') of(type).executed += v;
      else if (part === '_sum') of(type).executedMs += v;
      else if (part === '_bucket') {
        const le = labels.le === '+Inf' ? Infinity : Number(labels.le);
        const seen = under[type];
        if (le >= 100 && (!seen || le < seen.le)) under[type] = { le, n: v };
      }
    }
  }
  for (const [type, u] of Object.entries(under)) of(type).executedOver100Ms = of(type).executed - u.n;
  return out;
}

export async function scrapeCore(address: string): Promise<CoreMetrics> {
  const res = await fetch(`http://${address}/metrics`);
  return parseCore(await res.text());
}

/** What a phase added: `b − a`, per field. */
export function minusCore(b: CoreMetrics, a: CoreMetrics): CoreMetrics {
  const zero: CoreTasks = { executed: 0, executedMs: 0, executedOver100Ms: 0 };
  const byType: Record<string, CoreTasks> = {};
  for (const [t, x] of Object.entries(b.byType)) {
    const y = a.byType[t] ?? zero;
    byType[t] = {
      executed: x.executed - y.executed,
      executedMs: Math.round(x.executedMs - y.executedMs),
      executedOver100Ms: x.executedOver100Ms - y.executedOver100Ms,
    };
  }
  return {
    byType,
    forcedEvictions: b.forcedEvictions - a.forcedEvictions,
    cacheHits: b.cacheHits - a.cacheHits,
    cacheMisses: b.cacheMisses - a.cacheMisses,
  };
}
