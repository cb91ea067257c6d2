/**
 * Where gpuprov keeps things on the user's machine. Every function takes the environment
 * (HOME included) so tests can point everything at a temporary directory.
 */
import * as os from 'node:os';
import * as path from 'node:path';

function home(env: NodeJS.ProcessEnv): string {
  return env.HOME || os.homedir();
}

/** Durable state: the embedded server's SQLite file, pid files, logs, the worker's SSH key. */
export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.GPUPROV_STATE_DIR) return env.GPUPROV_STATE_DIR;
  if (env.XDG_STATE_HOME) return path.join(env.XDG_STATE_HOME, 'gpuprov');
  return path.join(home(env), '.local', 'state', 'gpuprov');
}

/** Re-obtainable downloads and builds (the temporal CLI binary, tool venvs). */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.GPUPROV_CACHE_DIR || path.join(home(env), '.cache', 'gpuprov');
}

/** User configuration (ssh config includes, kubeconfigs). */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.GPUPROV_CONFIG_DIR || path.join(home(env), '.config', 'gpuprov');
}
