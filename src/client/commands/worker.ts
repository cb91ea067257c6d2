/** `provision worker`: a gpuprov worker in the foreground, as `npm run worker` runs it (for your own Temporal cluster). */
import { spawn } from 'node:child_process';
import { workerCommand as workerProcessArgs } from '../../server/daemons';
import { EXIT_FAILED, type Command } from '../command';
import { leaf } from '../define';
import { VERSIONING_NOTES } from '../worker-versioning-notes';

const NOTES = `Runs the worker process the embedded default and \`npm run worker\` run (same entry, same Node flags:
a 512 MB heap), in the foreground until Ctrl-C or SIGTERM, which it passes on once (the worker then
finishes its activities in flight). It connects as the environment says: a temporal.toml profile
(TEMPORAL_PROFILE) or TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_*; with none
of them, 127.0.0.1:7233. Every host's worker needs the same deployment key: GPUPROV_SSH_KEY_FILE (or
GPUPROV_SSH_PRIVATE_KEY). Also read: GPUPROV_TASK_QUEUE, GPUPROV_CLOUDS, GPUPROV_LOG_LEVEL,
GPUPROV_METRICS_ADDRESS, GPUPROV_STATE_DIR, GPUPROV_CODEC_KEYS(_FILE) (payload encryption) and each cloud's
credentials (see the README). Before it polls, it replays the open workflows against its own code and
exits 3 if it could not continue one (README, "Upgrading workers: the replay gate").

${VERSIONING_NOTES}`;

/** Signals passed on to the worker. */
const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

export const workerCommand: Command = leaf({
  name: 'worker',
  summary: 'run a gpuprov worker in the foreground (same as npm run worker); settings from the environment',
  flags: [],
  notes: NOTES,
  temporal: true,
  async run(_parsed, io) {
    // Its own process group: a terminal's Ctrl-C reaches only this process, which passes it on
    // once. In the same group the worker would get it twice, and a second SIGINT kills it at once.
    const child = spawn(process.execPath, workerProcessArgs(), { env: io.env, stdio: 'inherit', detached: true });
    const forward = (signal: NodeJS.Signals): void => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    };
    for (const s of FORWARDED) process.on(s, forward);
    try {
      return await new Promise<number>((resolve, reject) => {
        child.once('error', reject);
        child.once('exit', (code) => resolve(code ?? EXIT_FAILED));
      });
    } finally {
      for (const s of FORWARDED) process.off(s, forward);
    }
  },
});
