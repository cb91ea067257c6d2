/**
 * Connects the CLI to Temporal: what is configured, else what runs on 127.0.0.1:7233, else
 * (when allowed) the embedded default, started in the background.
 */
import { Client, Connection } from '@temporalio/client';
import { codecOption } from '../codec';
import { checkServerConfig, embeddedStatus, resolveTemporal, startEmbedded } from '../server/embedded';
import { clientTracingInterceptors } from '../telemetry/tracing';
import { GpuprovClient } from './client';
import { errLine, type Io } from './command';
import { CommandFailure } from './output';

export interface ConnectedClient {
  client: Client;
  connection: Connection;
  namespace: string;
  address: string;
  /** Known for gpuprov's embedded server. */
  uiUrl?: string;
  /** True when this call started (part of) the embedded default. */
  startedEmbedded: boolean;
}

/** Nothing configured and nothing running, and the caller did not allow starting the embedded default. */
export class TemporalNotRunningError extends Error {
  readonly code = 'TEMPORAL_NOT_RUNNING';
  constructor(address: string) {
    super(
      `No Temporal server is configured and none answers on ${address}. ` +
        'Run `npx provision server start` (the embedded default), or set TEMPORAL_ADDRESS=host:port ' +
        '(or a temporal.toml profile) to use an existing server.',
    );
    this.name = 'TemporalNotRunningError';
  }
}

async function open(address: string, options: Parameters<typeof Connection.connect>[0], what: string): Promise<Connection> {
  try {
    return await Connection.connect({ connectTimeout: 10_000, ...options, address });
  } catch (err) {
    const fix =
      what === 'TEMPORAL_ADDRESS' || what === 'temporal.toml profile' ? `check that it runs and answers there, or fix ${what}` : 'npx provision server status';
    throw new CommandFailure(`could not connect to the Temporal server at ${address} (${what}): ${(err as Error).message}`, fix);
  }
}

/** A Temporal client as the environment in `io.env` says; see the module comment. */
export async function connectClient(io: Io, opts: { autoStart: boolean }): Promise<ConnectedClient> {
  // Bad configuration is bad input (exit 2), found before anything is contacted or started.
  checkServerConfig(io.env);
  const codec = codecOption(io.env); // GPUPROV_CODEC_KEYS(_FILE): payloads encrypted (src/codec)
  const target = await resolveTemporal(io.env);
  let connection: Connection;
  let uiUrl: string | undefined;
  let startedEmbedded = false;
  switch (target.kind) {
    case 'configured':
      connection = await open(target.address, target.connectionOptions, target.source === 'env' ? 'TEMPORAL_ADDRESS' : 'temporal.toml profile');
      break;
    case 'local':
      uiUrl = target.uiUrl;
      // Our own server is up but its worker died: bring the worker back.
      if (target.ours && opts.autoStart && !(await embeddedStatus(io.env)).worker.alive) {
        await startEmbedded({ env: io.env, log: (l) => errLine(io, l) });
        errLine(io, `Restarted the embedded gpuprov worker (server at ${target.address}).`);
        startedEmbedded = true;
      }
      connection = await open(target.address, {}, target.ours ? 'the embedded default' : 'a local server');
      break;
    case 'embedded': {
      if (!opts.autoStart) throw new TemporalNotRunningError(target.address);
      const started = await startEmbedded({ env: io.env, log: (l) => errLine(io, l) });
      startedEmbedded = !started.alreadyRunning;
      uiUrl = target.uiUrl;
      errLine(io, `No Temporal server configured: started the embedded default at ${target.address} — Web UI ${target.uiUrl}`);
      connection = await open(target.address, {}, 'the embedded default');
      break;
    }
  }
  // With OTEL_EXPORTER_OTLP_ENDPOINT: a span per start/signal/query, whose context the workflow continues.
  const workflowInterceptors = await clientTracingInterceptors(io.env);
  return {
    client: new Client({
      connection,
      namespace: target.namespace,
      ...codec,
      ...(workflowInterceptors.length ? { interceptors: { workflow: workflowInterceptors } } : {}),
    }),
    connection,
    namespace: target.namespace,
    address: target.address,
    uiUrl,
    startedEmbedded,
  };
}

export interface ConnectOptions {
  /** Where the settings come from (TEMPORAL_*, temporal.toml profile, GPUPROV_*); default process.env. */
  env?: NodeJS.ProcessEnv;
  /** With nothing configured or running, start the embedded default (default false: throw instead). */
  autoStart?: boolean;
  /** The workers' task queue; default GPUPROV_TASK_QUEUE, else `gpuprov`. */
  taskQueue?: string;
  /** Progress lines (starting the embedded default); default: none. */
  log?: (line: string) => void;
}

/**
 * The library's way in (`require('gpuprov').connect()`): a GpuprovClient connected as the CLI
 * connects. Close it with `client.temporal.connection.close()`.
 */
export async function connect(o: ConnectOptions = {}): Promise<GpuprovClient> {
  const env = o.env ?? process.env;
  const io: Io = { out: () => undefined, err: (s) => o.log?.(s.trimEnd()), isTTY: false, env };
  const conn = await connectClient(io, { autoStart: o.autoStart ?? false });
  return new GpuprovClient(conn.client, o.taskQueue ?? (env.GPUPROV_TASK_QUEUE || undefined));
}
