/**
 * A small SSH server on ssh2, for the local cloud where OpenSSH's sshd is missing: one host key,
 * public-key login for one user from an authorized_keys file (re-read on every login, as sshd
 * does), sessions (exec, a shell with a pseudo-terminal, SFTP; see ./server-session) and
 * `direct-tcpip` channels (`ssh -L`, `ssh -W`, SshSession.forward). It runs as the user it
 * serves; no remote forwarding (`ssh -R`), agent or X11 forwarding.
 */
import { readFileSync } from 'node:fs';
import { connect, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Server, utils, type AuthContext, type Connection, type ParsedKey } from 'ssh2';
import { handleSession, killGroup, type SessionChildren } from './server-session';

export interface SshServerOptions {
  /** Address to listen on (the local cloud: 127.0.0.1). */
  host: string;
  /** 0: the OS picks one. */
  port: number;
  /** Host private key (OpenSSH or PEM text). */
  hostKey: string;
  /** authorized_keys file: its keys, and only they, may log in. */
  authorizedKeysFile: string;
  /** The one login name accepted (the user this process runs as). */
  user: string;
  /** One line per event (logins, refusals, errors); no secrets. */
  log: (line: string) => void;
}

export interface RunningSshServer {
  port: number;
  /** Stop listening, end every connection and kill every process a session started. */
  close(): void;
}

/** Software name in the SSH identification string (`ssh -v` shows it). */
export const BUILTIN_IDENT = 'gpuprov_builtin_sshd';

/** Public keys of an authorized_keys text; lines with options or comments are fine, others skipped. */
export function parseAuthorizedKeys(text: string): ParsedKey[] {
  const keys: ParsedKey[] = [];
  for (const line of text.split('\n')) {
    const m = /(?:^|\s)((?:ssh|ecdsa|sk)-[\w@.-]+\s+[A-Za-z0-9+/]+=*)/.exec(line.trim());
    if (!m?.[1]) continue;
    const k = utils.parseKey(m[1]);
    if (k instanceof Error) continue;
    keys.push(...(Array.isArray(k) ? k : [k]));
  }
  return keys;
}

function authenticate(ctx: AuthContext, o: SshServerOptions): void {
  if (ctx.method !== 'publickey' || ctx.username !== o.user) return ctx.reject(['publickey']);
  let text = '';
  try {
    text = readFileSync(o.authorizedKeysFile, 'utf8');
  } catch {
    // no file: nobody may log in
  }
  const key = parseAuthorizedKeys(text).find((k) => k.getPublicSSH().equals(ctx.key.data));
  if (!key) {
    o.log(`refused key ${ctx.key.algo} for ${ctx.username}: not in ${o.authorizedKeysFile}`);
    return ctx.reject(['publickey']);
  }
  // Without a signature the client only asks whether this key would do.
  if (!ctx.signature) return ctx.accept();
  if (key.verify(ctx.blob!, ctx.signature, ctx.hashAlgo) !== true) return ctx.reject(['publickey']);
  o.log(`accepted publickey ${ctx.key.algo} for ${ctx.username}`);
  ctx.accept();
}

/** Serve `direct-tcpip`: a TCP connection from this host to where the client asked. */
function forwardTcp(client: Connection, o: SshServerOptions): void {
  client.on('tcpip', (accept, reject, info) => {
    const sock = connect(info.destPort, info.destIP);
    sock.once('error', (err) => {
      o.log(`direct-tcpip to ${info.destIP}:${info.destPort} failed: ${err.message}`);
      reject();
    });
    sock.once('connect', () => {
      const ch = accept();
      sock.removeAllListeners('error');
      sock.on('error', () => ch.destroy());
      ch.on('error', () => sock.destroy());
      ch.on('close', () => sock.destroy());
      sock.pipe(ch).pipe(sock);
    });
  });
}

/** Listen; resolves once the port accepts connections. */
export function startSshServer(o: SshServerOptions): Promise<RunningSshServer> {
  const children: SessionChildren = new Set();
  const clients = new Set<Connection>();
  const server = new Server({ hostKeys: [o.hostKey], ident: BUILTIN_IDENT }, (client, info) => {
    clients.add(client);
    const from = `${info.ip} ${info.port}`;
    client.on('authentication', (ctx) => authenticate(ctx, o));
    client.on('ready', () => {
      client.on('session', (accept) => handleSession(accept(), { user: o.user, from, port: (server.address() as AddressInfo).port, children, log: o.log }));
      forwardTcp(client, o);
    });
    client.on('error', (err: Error) => o.log(`connection from ${from}: ${err.message}`));
    client.on('close', () => clients.delete(client));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.removeListener('error', reject);
      server.on('error', (err: Error) => o.log(`server: ${err.message}`));
      const close = (): void => {
        for (const pid of children) killGroup(pid, 'SIGKILL');
        for (const c of clients) c.end();
        server.close();
      };
      resolve({ port: (server.address() as AddressInfo).port, close });
    });
  });
}

/**
 * How to start the built-in server as its own process: `node [tsx] builtin-sshd <args>`. The
 * entry's name contains `sshd` and its arguments are sshd's (`-D -f <config> -E <log>`), so
 * the local cloud's process checks treat it as an sshd of that config.
 */
export function builtinSshdCommand(args: string[]): { command: string; args: string[] } {
  const ts = join(__dirname, 'builtin-sshd.ts');
  const entry = __filename.endsWith('.ts') ? ['--import', pathToFileURL(require.resolve('tsx')).href, ts] : [join(__dirname, 'builtin-sshd.js')];
  return { command: process.execPath, args: ['--max-old-space-size=128', ...entry, ...args] };
}
