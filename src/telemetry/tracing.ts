/**
 * OpenTelemetry traces through @temporalio/interceptors-opentelemetry, exported over OTLP
 * (http/protobuf) only when OTEL_EXPORTER_OTLP_ENDPOINT (or …_TRACES_ENDPOINT) is set; otherwise
 * none of this is loaded. The CLI's client interceptor opens `StartWorkflow:vmWorkflow` and passes
 * its context in the workflow's headers; the workflow interceptors (bundled) and the activity
 * interceptors continue that trace; `provision start`'s own span (withCommandSpan) is the root,
 * so one trace runs from the command to Ready.
 */
import type { WorkflowClientInterceptor } from '@temporalio/client';
import type { ActivityInterceptorsFactory, WorkerOptions } from '@temporalio/worker';
import type { Resource } from '@opentelemetry/resources';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { InputError } from '../core/errors';

/** Whether traces are exported (an OTLP endpoint is configured). */
export function tracingEnabled(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT);
}

/**
 * The OTLP/HTTP traces URL: …_TRACES_ENDPOINT as given, else `<OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces`.
 * Another protocol than http/protobuf asked for is bad input (it would send to the wrong port).
 */
export function tracesUrl(env: NodeJS.ProcessEnv): string | undefined {
  if (!tracingEnabled(env)) return undefined;
  for (const v of ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL'] as const) {
    const p = env[v];
    if (p && p !== 'http/protobuf')
      throw new InputError(
        v,
        `gpuprov exports traces over http/protobuf only, not "${p}"`,
        `unset ${v} or set it to http/protobuf, and point OTEL_EXPORTER_OTLP_ENDPOINT at the collector's OTLP/HTTP port (usually 4318)`,
      );
  }
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (env.OTEL_EXPORTER_OTLP_ENDPOINT) return `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`;
  return undefined;
}

/** The module the worker bundles with its workflows when tracing (workflow spans, context from headers). */
export function otelWorkflowInterceptorModule(): string {
  return require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');
}

interface Started {
  processor: SpanProcessor;
  resource: Resource;
  shutdown(): Promise<void>;
}

/**
 * Registers the global tracer provider (with an async-hooks context manager and W3C propagation,
 * which the interceptors need) exporting to `url`. `batch`: batch spans (a worker); else export
 * each span as it ends (the CLI, a short-lived process).
 */
async function startProvider(serviceName: string, url: string, env: NodeJS.ProcessEnv, batch: boolean): Promise<Started> {
  const [
    { BasicTracerProvider, BatchSpanProcessor, SimpleSpanProcessor },
    { Resource: ResourceImpl },
    { OTLPTraceExporter },
    { AsyncLocalStorageContextManager },
  ] = await Promise.all([
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/exporter-trace-otlp-proto'),
    import('@opentelemetry/context-async-hooks'),
  ]);
  const resource = new ResourceImpl({ 'service.name': env.OTEL_SERVICE_NAME || serviceName });
  const exporter = new OTLPTraceExporter({ url });
  const processor = batch ? new BatchSpanProcessor(exporter) : new SimpleSpanProcessor(exporter);
  const provider = new BasicTracerProvider({ resource, spanProcessors: [processor] });
  provider.register({ contextManager: new AsyncLocalStorageContextManager().enable() });
  return { processor, resource, shutdown: () => provider.shutdown() };
}

/** What a worker adds to `Worker.create` when tracing. */
export interface WorkerTracing {
  activity: ActivityInterceptorsFactory[];
  sinks: NonNullable<WorkerOptions['sinks']>;
  /** Flushes spans not yet exported. */
  shutdown(): Promise<void>;
}

/** Tracing for a worker process, or undefined when no OTLP endpoint is configured. */
export async function startWorkerTracing(env: NodeJS.ProcessEnv): Promise<WorkerTracing | undefined> {
  const url = tracesUrl(env);
  if (!url) return undefined;
  const started = await startProvider('gpuprov-worker', url, env, true);
  const otel = await import('@temporalio/interceptors-opentelemetry');
  return {
    activity: [(ctx) => ({ inbound: new otel.OpenTelemetryActivityInboundInterceptor(ctx), outbound: new otel.OpenTelemetryActivityOutboundInterceptor(ctx) })],
    sinks: { exporter: otel.makeWorkflowExporter(started.processor, started.resource) },
    shutdown: () => started.shutdown(),
  };
}

let cli: Promise<Started> | undefined;

/** The CLI process's tracer provider, registered once; shut down (flushing) before the process exits. */
function cliProvider(url: string, env: NodeJS.ProcessEnv): Promise<Started> {
  cli ??= startProvider('gpuprov-cli', url, env, false).then((started) => {
    process.once('beforeExit', () => void started.shutdown());
    return started;
  });
  return cli;
}

/** What a command span lets its body record: attributes, e.g. the stage the launch ended in. */
export interface CommandSpan {
  setAttribute(key: string, value: string | number | boolean): void;
}

const NO_SPAN: CommandSpan = { setAttribute: () => undefined };

/**
 * Runs a CLI command's body inside one span named `name` (e.g. `provision start`), the active
 * context of everything it does: the client interceptor's `StartWorkflow` span is its child, and
 * so the workflow's and activities' spans are in its trace. The span ends when `fn` returns or
 * throws (a non-zero exit code or an error marks it failed). Without an OTLP endpoint: just `fn`.
 */
export async function withCommandSpan(
  env: NodeJS.ProcessEnv,
  name: string,
  attributes: Record<string, string>,
  fn: (span: CommandSpan) => Promise<number>,
): Promise<number> {
  const url = tracesUrl(env);
  if (!url) return fn(NO_SPAN);
  await cliProvider(url, env);
  const { trace, SpanStatusCode } = await import('@opentelemetry/api');
  return trace.getTracer('gpuprov-cli').startActiveSpan(name, { attributes }, async (span) => {
    try {
      const code = await fn(span);
      span.setAttribute('gpuprov.exit_code', code);
      if (code !== 0) span.setStatus({ code: SpanStatusCode.ERROR, message: `exit code ${code}` });
      return code;
    } catch (err) {
      span.recordException(err instanceof Error ? err : String(err));
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message.split('\n')[0] : String(err) });
      throw err;
    } finally {
      span.end();
    }
  });
}

let client: Promise<WorkflowClientInterceptor[]> | undefined;

/**
 * The Temporal client's workflow interceptors for this process: the OpenTelemetry one when an
 * OTLP endpoint is configured (the provider is registered once and shut down, flushing, before
 * the process exits), else none.
 */
export function clientTracingInterceptors(env: NodeJS.ProcessEnv): Promise<WorkflowClientInterceptor[]> {
  const url = tracesUrl(env);
  if (!url) return Promise.resolve([]);
  client ??= (async () => {
    await cliProvider(url, env);
    const { OpenTelemetryWorkflowClientInterceptor } = await import('@temporalio/interceptors-opentelemetry');
    const otel = new OpenTelemetryWorkflowClientInterceptor();
    // Calls that change something; not the status queries and describes the CLI polls with while
    // it follows a launch (each would be a trace of its own, hundreds per launch).
    const traced: WorkflowClientInterceptor = {
      start: (input, next) => otel.start(input, next),
      startWithDetails: (input, next) => otel.startWithDetails(input, next),
      signal: (input, next) => otel.signal(input, next),
      signalWithStart: (input, next) => otel.signalWithStart(input, next),
      startUpdate: (input, next) => otel.startUpdate(input, next),
      cancel: (input, next) => otel.cancel(input, next),
      terminate: (input, next) => otel.terminate(input, next),
    };
    return [traced];
  })();
  return client;
}
