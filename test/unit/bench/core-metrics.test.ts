/** The scale bench's readings of the SDK core's Prometheus text and of task spans in histories. */
import { describe, expect, it } from 'vitest';
import { minusCore, parseCore } from '../../../bench/core-metrics';
import { workflowTaskDurations, type HistoryEvent } from '../../../bench/history';

const TEXT = `
# HELP temporal_workflow_task_execution_latency x
temporal_workflow_task_execution_latency_bucket{namespace="default",workflow_type="w",le="50"} 6
temporal_workflow_task_execution_latency_bucket{namespace="default",workflow_type="w",le="100"} 8
temporal_workflow_task_execution_latency_bucket{namespace="default",workflow_type="w",le="500"} 9
temporal_workflow_task_execution_latency_bucket{namespace="default",workflow_type="w",le="+Inf"} 10
temporal_workflow_task_execution_latency_sum{namespace="default",workflow_type="w"} 1234.5
temporal_workflow_task_execution_latency_count{namespace="default",workflow_type="w"} 10
temporal_sticky_cache_total_forced_eviction{namespace="default",task_queue="q"} 7
temporal_sticky_cache_hit{namespace="default",task_queue="q"} 30
temporal_sticky_cache_miss{namespace="default",task_queue="q"} 2
`;

const at = (ms: number) => ({ seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1e6 });
const task = (id: number, startMs: number, doneMs: number): HistoryEvent[] =>
  [
    { eventId: id, eventTime: at(startMs), workflowTaskStartedEventAttributes: {} },
    { eventId: id + 1, eventTime: at(doneMs), workflowTaskCompletedEventAttributes: { startedEventId: id } },
  ] as unknown as HistoryEvent[];

describe('core metrics', () => {
  it('reads tasks by workflow type, those over 100 ms, and the cache counters; a phase is a difference', () => {
    const m = parseCore(TEXT);
    expect(m.byType.w).toMatchObject({ executed: 10, executedMs: 1234.5, executedOver100Ms: 2 });
    expect(m).toMatchObject({ forcedEvictions: 7, cacheHits: 30, cacheMisses: 2 });
    const d = minusCore(m, parseCore(TEXT.replace('_count{namespace="default",workflow_type="w"} 10', '_count{namespace="default",workflow_type="w"} 4')));
    expect(d.byType.w?.executed).toBe(6);
    expect(d.forcedEvictions).toBe(0);
  });

  it('task spans: only tasks started inside the window count', () => {
    const h = [...task(1, 1_000, 1_040), ...task(3, 5_000, 5_300)];
    expect(workflowTaskDurations([h])).toEqual([40, 300]);
    expect(workflowTaskDurations([h], 2_000, 9_000)).toEqual([300]);
  });
});
