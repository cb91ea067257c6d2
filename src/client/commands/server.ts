/** `provision server start | stop | status`: the embedded default Temporal server and worker. */
import { InputError } from '../../core/errors';
import { embeddedConfig, embeddedStatus, startEmbedded, stopEmbedded, type EmbeddedStatus } from '../../server/embedded';
import { EXIT_OK, errLine, outLine, type Command, type Io } from '../command';
import { group, leaf } from '../define';
import { CommandFailure } from '../output';

const NOTES = `The embedded default: a Temporal dev server persisted to SQLite under the state dir (gRPC
127.0.0.1:7233, Web UI http://localhost:8233) and a gpuprov worker, both in the background.
Environment: GPUPROV_STATE_DIR, GPUPROV_EMBEDDED_PORT, GPUPROV_EMBEDDED_UI_PORT, TEMPORAL_CLI_PATH.`;

function describe(s: EmbeddedStatus): string[] {
  const proc = (name: string, p: { pid?: number; alive: boolean; logFile: string }, extra = ''): string =>
    `${name}: ${p.alive ? `running (pid ${p.pid ?? '?'})${extra}` : 'not running'} — log ${p.logFile}`;
  return [
    proc('Temporal server', s.server, s.server.alive ? (s.server.healthy ? `, answering on ${s.address}` : `, NOT answering on ${s.address}`) : ''),
    proc('Worker', s.worker),
    `State: ${s.dbFile}`,
  ];
}

async function start(io: Io, json: boolean, worker: boolean): Promise<number> {
  if (io.env.TEMPORAL_ADDRESS && !json) {
    errLine(io, `note: TEMPORAL_ADDRESS=${io.env.TEMPORAL_ADDRESS} is set, so other commands connect there, not to the embedded server.`);
  }
  const r = await startEmbedded({ env: io.env, log: (l) => errLine(io, l), worker });
  if (json) {
    outLine(io, JSON.stringify({ ...r.status, alreadyRunning: r.alreadyRunning, startedServer: r.startedServer, startedWorker: r.startedWorker }, null, 2));
    return EXIT_OK;
  }
  outLine(io, r.alreadyRunning ? `The embedded default is already running at ${r.status.address}.` : `Started the embedded default at ${r.status.address}.`);
  for (const line of describe(r.status)) outLine(io, line);
  outLine(io, `Web UI: ${r.status.uiUrl} — next: npx provision start --name gpu1`);
  return EXIT_OK;
}

async function stop(io: Io, json: boolean): Promise<number> {
  const before = await embeddedStatus(io.env);
  const { stopped } = await stopEmbedded(io.env);
  if (json) {
    outLine(io, JSON.stringify({ stopped, dbFile: before.dbFile }, null, 2));
    return EXIT_OK;
  }
  if (stopped.length === 0) outLine(io, 'The embedded default was not running.');
  else outLine(io, `Stopped the embedded ${stopped.map((d) => (d === 'temporal' ? 'Temporal server' : 'worker')).join(' and ')}.`);
  outLine(io, `State kept in ${before.dbFile} — next: npx provision server start`);
  return EXIT_OK;
}

async function status(io: Io, json: boolean): Promise<number> {
  const s = await embeddedStatus(io.env);
  if (json) {
    outLine(io, JSON.stringify(s, null, 2));
    return EXIT_OK;
  }
  outLine(io, s.running ? `The embedded default is running at ${s.address}.` : 'The embedded default is not (fully) running.');
  for (const line of describe(s)) outLine(io, line);
  outLine(io, s.running ? `Web UI: ${s.uiUrl} — next: npx provision start --name gpu1` : 'next: npx provision server start');
  return EXIT_OK;
}

/** Errors of the daemons (not of the input) come with where to look. */
async function explained(io: Io, what: () => Promise<number>): Promise<number> {
  try {
    return await what();
  } catch (err) {
    if (err instanceof InputError || err instanceof CommandFailure) throw err;
    throw new CommandFailure(
      err instanceof Error ? err.message : String(err),
      `see the logs under ${embeddedConfig(io.env).logDir}, then: npx provision server status`,
    );
  }
}

export const serverCommand: Command = group({
  name: 'server',
  summary: 'start, stop or show the embedded Temporal server and worker',
  notes: NOTES,
  subcommands: [
    leaf({
      name: 'start',
      path: 'server start',
      summary: 'start the embedded dev server and a gpuprov worker in the background; idempotent',
      flags: [
        {
          name: 'worker',
          type: 'boolean',
          negatable: true,
          meaning: 'also start the gpuprov worker (--no-worker: only the Temporal server)',
          default: 'on',
          example: '--no-worker',
        },
      ],
      notes: NOTES,
      temporal: true,
      run: ({ values, json }, io) => explained(io, () => start(io, json, values.worker !== false)),
    }),
    leaf({
      name: 'stop',
      path: 'server stop',
      summary: 'stop both; the state (workflow history) is kept for the next start',
      flags: [],
      temporal: true,
      run: ({ json }, io) => explained(io, () => stop(io, json)),
    }),
    leaf({
      name: 'status',
      path: 'server status',
      summary: 'show both daemons (pid, alive), the address and the Web UI URL',
      flags: [],
      temporal: true,
      run: ({ json }, io) => explained(io, () => status(io, json)),
    }),
  ],
});
