/**
 * The Temporal connection settings as `@temporalio/envconfig` reads them (a temporal.toml
 * profile, then the TEMPORAL_* variables), checked before anything is contacted: bad settings are
 * bad input (InputError naming the file or variable), not a library's raw words later.
 */
import * as path from 'node:path';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { InputError } from '../core/errors';

/** `host:port` (a DNS name, IPv4 or [IPv6], optionally `dns:///`), the form Temporal clients take. */
const ADDRESS = /^(?:dns:\/\/\/)?(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252}[A-Za-z0-9])?):(\d{1,5})$/;

/** The temporal.toml envconfig reads (TEMPORAL_CONFIG_FILE, else the user's config dir). */
function configFile(env: NodeJS.ProcessEnv): string {
  if (env.TEMPORAL_CONFIG_FILE) return env.TEMPORAL_CONFIG_FILE;
  const base = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(env.HOME ?? '~', '.config');
  return path.join(base, 'temporalio', 'temporal.toml');
}

/**
 * The Temporal connection settings (`@temporalio/envconfig`: temporal.toml profile, then
 * TEMPORAL_* variables), checked: a broken file, a missing profile or an address that is not
 * `host:port` is an InputError naming the file or variable. Reads files only; contacts nothing.
 */
export function temporalConfig(env: NodeJS.ProcessEnv = process.env): ReturnType<typeof loadClientConnectConfig> {
  const overrideEnvVars = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
  let loaded: ReturnType<typeof loadClientConnectConfig>;
  try {
    loaded = loadClientConnectConfig({ overrideEnvVars });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    // First line only, printable only: a binary file's parse error quotes the binary.
    const msg = (e.message.split('\n')[0] ?? '').replace(/[^\x20-\x7e]/g, '?').slice(0, 200);
    const file = configFile(env);
    if (/^Profile '.*' not found/.test(msg)) {
      throw new InputError(
        'TEMPORAL_PROFILE',
        `profile "${env.TEMPORAL_PROFILE ?? ''}" is not in ${file}`,
        'name a [profile.NAME] of that file, or unset TEMPORAL_PROFILE',
      );
    }
    if (e.code && e.path && path.resolve(e.path) !== path.resolve(file)) {
      throw new InputError(
        'TEMPORAL_TLS_*',
        `cannot read ${e.path} (${e.code}), named by the Temporal TLS settings`,
        "fix the file paths in the TEMPORAL_TLS_* variables or the profile's [tls] section",
      );
    }
    throw new InputError(
      file,
      `the Temporal config file cannot be used: ${msg}`,
      'fix or remove the file (TOML: [profile.default] address = "host:7233"), or set TEMPORAL_CONFIG_FILE to another file',
    );
  }
  const address = loaded.connectionOptions.address;
  if (address !== undefined) {
    const field = env.TEMPORAL_ADDRESS ? 'TEMPORAL_ADDRESS' : `${configFile(env)} (address)`;
    const port = ADDRESS.exec(address)?.[1];
    if (port === undefined || Number(port) < 1 || Number(port) > 65_535) {
      throw new InputError(
        field,
        `${JSON.stringify(address)} is not host:port`,
        `write host:port without a scheme, e.g. TEMPORAL_ADDRESS=localhost:7233 or my-ns.a1b2c.tmprl.cloud:7233`,
      );
    }
  }
  return loaded;
}
