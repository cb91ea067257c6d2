/**
 * Where gpuprov keeps things on the user's machine. Every function takes the environment
 * (HOME included) so tests can point everything at a temporary directory.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { InputError } from './core/errors';

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

/** The variable that decides each directory, for messages that name what to fix. */
function sources(env: NodeJS.ProcessEnv): { dir: string; variable: string }[] {
  return [
    { dir: stateDir(env), variable: env.GPUPROV_STATE_DIR ? 'GPUPROV_STATE_DIR' : env.XDG_STATE_HOME ? 'XDG_STATE_HOME' : 'HOME' },
    { dir: cacheDir(env), variable: env.GPUPROV_CACHE_DIR ? 'GPUPROV_CACHE_DIR' : 'HOME' },
    { dir: configDir(env), variable: env.GPUPROV_CONFIG_DIR ? 'GPUPROV_CONFIG_DIR' : 'HOME' },
  ];
}

/**
 * Checks, without creating anything, that gpuprov's directories are (or can become) directories:
 * each path, or its nearest existing ancestor, must be a directory. Throws an InputError naming
 * the variable to fix (`GPUPROV_STATE_DIR=/etc/passwd` is bad input, not a crash later).
 */
export function checkDirs(env: NodeJS.ProcessEnv = process.env): void {
  for (const { dir, variable } of sources(env)) {
    for (let p = dir; ; p = path.dirname(p)) {
      let st: fs.Stats | undefined;
      try {
        st = fs.statSync(p);
      } catch {
        // Missing: it will be created; look at its parent.
      }
      if (st && !st.isDirectory()) {
        throw new InputError(
          variable,
          `${dir} cannot be a directory: ${p} is a file`,
          `point ${variable} at a directory (now ${variable}=${env[variable] ?? ''}), or move the file away`,
        );
      }
      if (st || path.dirname(p) === p) break;
    }
  }
}
