/** Paths and ports of the embedded default (`GPUPROV_EMBEDDED_PORT` / `_UI_PORT` override). */
import * as path from 'node:path';
import { InputError } from '../core/errors';
import { stateDir } from '../paths';

export const EMBEDDED_NAMESPACE = 'default';

export interface EmbeddedConfig {
  stateDir: string;
  port: number;
  uiPort: number;
  /** `127.0.0.1:<port>` */
  address: string;
  /** `http://localhost:<uiPort>` */
  uiUrl: string;
  /** Absolute: it is how our own server is recognised among the machine's processes. */
  dbFile: string;
  logDir: string;
  runDir: string;
}

function intFromEnv(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isInteger(n) || n <= 0 || n > 65535) {
    throw new InputError(name, `${name}=${value} is not a TCP port`, `set ${name} to a port from 1 to 65535 (default ${fallback}), or unset it`);
  }
  return n;
}

/** Paths and ports of the embedded default; throws InputError on a bad port setting. */
export function embeddedConfig(env: NodeJS.ProcessEnv = process.env): EmbeddedConfig {
  const dir = stateDir(env);
  const port = intFromEnv(env.GPUPROV_EMBEDDED_PORT, 7233, 'GPUPROV_EMBEDDED_PORT');
  const uiPort = intFromEnv(env.GPUPROV_EMBEDDED_UI_PORT, 8233, 'GPUPROV_EMBEDDED_UI_PORT');
  if (port === uiPort)
    throw new InputError(
      'GPUPROV_EMBEDDED_UI_PORT',
      `the Web UI port ${uiPort} is the gRPC port too`,
      'give GPUPROV_EMBEDDED_PORT and GPUPROV_EMBEDDED_UI_PORT different ports (default 7233 and 8233)',
    );
  return {
    stateDir: dir,
    port,
    uiPort,
    address: `127.0.0.1:${port}`,
    uiUrl: `http://localhost:${uiPort}`,
    dbFile: path.resolve(dir, 'temporal.db'),
    logDir: path.join(dir, 'logs'),
    runDir: path.join(dir, 'run'),
  };
}
