/**
 * Entry of the built-in SSH server process: `builtin-sshd -D -f <sshd_config> -E <log>`, the
 * arguments the local cloud gives OpenSSH's sshd. From the config it reads `ListenAddress`,
 * `Port`, `HostKey` and `AuthorizedKeysFile`; every other line is ignored. Runs in the
 * foreground until SIGTERM/SIGINT/SIGHUP, then kills what its sessions started and exits.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { startSshServer } from './server';

function arg(flag: string): string | undefined {
  const i = process.argv.indexOf(flag);
  return i < 0 ? undefined : process.argv[i + 1];
}

function setting(config: string, key: string): string | undefined {
  const line = config.split('\n').find((l) => l.trim().split(/\s+/)[0]?.toLowerCase() === key.toLowerCase());
  return line?.trim().split(/\s+/).slice(1).join(' ');
}

async function main(): Promise<void> {
  const configPath = arg('-f');
  const logPath = arg('-E');
  const log = (line: string): void => {
    const text = `${new Date().toISOString()} builtin-sshd[${process.pid}]: ${line}\n`;
    if (logPath) appendFileSync(logPath, text);
    else process.stderr.write(text);
  };
  if (!configPath) throw new Error('usage: builtin-sshd -D -f <sshd_config> [-E <log>]');
  const config = readFileSync(configPath, 'utf8');
  const need = (key: string): string => {
    const v = setting(config, key);
    if (!v) throw new Error(`${configPath}: no ${key}`);
    return v;
  };
  const server = await startSshServer({
    host: setting(config, 'ListenAddress') ?? '127.0.0.1',
    port: Number(need('Port')),
    hostKey: readFileSync(need('HostKey'), 'utf8'),
    authorizedKeysFile: need('AuthorizedKeysFile'),
    user: userInfo().username,
    log,
  });
  // Before this point no session has started anything, so the default signal action is fine.
  const stop = (why: string, code: number): void => {
    log(why);
    server.close();
    process.exit(code);
  };
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(sig, () => stop(`received ${sig}; terminating`, 0));
  process.on('uncaughtException', (err) => stop(`fatal: ${err.stack ?? err.message}`, 1));
  log(`Server listening on ${setting(config, 'ListenAddress') ?? '127.0.0.1'} port ${server.port}.`);
}

main().catch((err: unknown) => {
  process.stderr.write(`builtin-sshd: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
