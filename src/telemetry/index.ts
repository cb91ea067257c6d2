/**
 * The worker process's telemetry, from its environment:
 *   GPUPROV_LOG_LEVEL             trace | debug | info (default) | warn | error
 *   GPUPROV_METRICS_ADDRESS       Prometheus endpoint (host:port): the SDK's temporal_* series and gpuprov_*
 *   GPUPROV_METRICS_INTERVAL_MS   how often the deployment-wide gauges are read (default 15000)
 *   OTEL_EXPORTER_OTLP_ENDPOINT   traces over OTLP http/protobuf (…_TRACES_ENDPOINT, OTEL_SERVICE_NAME too)
 * Logs are JSON lines on stdout, plain lines when stdout is a terminal.
 */
import type { Client } from '@temporalio/client';
import { Runtime, type LogLevel } from '@temporalio/worker';
import { DURATION_BUCKETS_S, METRICS } from '../core/metrics';
import { InputError } from '../core/errors';
import { startFleetGauges } from './fleet-gauges';
import { GpuprovLogger, logLevelFromEnv } from './logger';
import { severity } from './log-format';
import { startWorkerTracing, type WorkerTracing } from './tracing';

export { GpuprovLogger, logLevelFromEnv } from './logger';
export { activityLogAttributes } from './activity-attributes';
export { tracingEnabled, otelWorkflowInterceptorModule, type WorkerTracing } from './tracing';

export interface WorkerTelemetry {
  logger: GpuprovLogger;
  /** Set when GPUPROV_METRICS_ADDRESS is. */
  metricsAddress?: string;
  /** Set when an OTLP endpoint is. */
  tracing?: WorkerTracing;
  /** Starts the deployment-wide gauges (only with metrics; once); `stop()` ends them. */
  startGauges(client: Client): { stop(): void };
  /** Stops the gauges and flushes spans. */
  shutdown(): Promise<void>;
}

let installed: GpuprovLogger | undefined;

/** The logger `installWorkerTelemetry` installed in this process, if it ran. */
export function workerLogger(): GpuprovLogger | undefined {
  return installed;
}

function intervalFromEnv(env: NodeJS.ProcessEnv): number {
  const raw = env.GPUPROV_METRICS_INTERVAL_MS;
  if (!raw) return 15_000;
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms < 100)
    throw new InputError('GPUPROV_METRICS_INTERVAL_MS', `not a whole number of milliseconds ≥ 100: "${raw}"`, 'e.g. GPUPROV_METRICS_INTERVAL_MS=15000');
  return ms;
}

/**
 * Installs the SDK runtime with gpuprov's logger (core's own lines forwarded to it at WARN and
 * above) and, with GPUPROV_METRICS_ADDRESS, the Prometheus endpoint; starts tracing when an OTLP
 * endpoint is set. Must run before any connection or worker exists in this process.
 */
export async function installWorkerTelemetry(env: NodeJS.ProcessEnv, out: NodeJS.WriteStream = process.stdout): Promise<WorkerTelemetry> {
  const level: LogLevel = logLevelFromEnv(env);
  const intervalMs = intervalFromEnv(env);
  const logger = new GpuprovLogger({ level, format: out.isTTY ? 'text' : 'json', write: (line) => out.write(line) });
  const metricsAddress = env.GPUPROV_METRICS_ADDRESS || undefined;
  Runtime.install({
    logger,
    telemetryOptions: {
      logging: { filter: { core: severity(level) > severity('WARN') ? level : 'WARN', other: 'ERROR' }, forward: {} },
      ...(metricsAddress
        ? {
            metrics: {
              prometheus: {
                bindAddress: metricsAddress,
                histogramBucketOverrides: { [METRICS.timeToReady]: [...DURATION_BUCKETS_S], [METRICS.timeToGone]: [...DURATION_BUCKETS_S] },
              },
            },
          }
        : {}),
    },
  });
  installed = logger;
  const meter = Runtime.instance().metricMeter;
  // A placeholder until the account watcher exists: the series is there, at 0.
  if (metricsAddress) meter.createCounter(METRICS.orphansSwept, '1', 'orphaned instances deleted by the account watcher').add(0);
  const tracing = await startWorkerTracing(env);
  let gauges: { stop(): void } | undefined;
  return {
    logger,
    ...(metricsAddress ? { metricsAddress } : {}),
    ...(tracing ? { tracing } : {}),
    startGauges: (client) => {
      if (metricsAddress) gauges ??= startFleetGauges({ client, meter, intervalMs, log: logger });
      return { stop: () => gauges?.stop() };
    },
    shutdown: async () => {
      gauges?.stop();
      await tracing?.shutdown();
    },
  };
}
