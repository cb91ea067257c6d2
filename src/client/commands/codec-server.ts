/** `provision codec-server`: Temporal's codec endpoints (src/codec/server.ts) until Ctrl-C. */
import type { AddressInfo } from 'node:net';
import { codecFromEnv, KEYS_FILE_VAR, KEYS_VAR } from '../../codec';
import { createCodecServer } from '../../codec/server';
import { codecToken, TOKEN_VAR } from '../../codec/token';
import { InputError } from '../../core/errors';
import { embeddedConfig } from '../../server/embedded-config';
import { EXIT_OK, errLine, outLine, type Command, type Io } from '../command';
import { leaf } from '../define';
import { show } from '../flags';
import { portFlag } from '../k3s-access';
import { CommandFailure } from '../output';

const DEFAULT_PORT = 8089;

const FLAGS = [
  { name: 'port', type: 'string', value: 'PORT', meaning: 'TCP port to listen on', format: '1-65535', default: String(DEFAULT_PORT), example: '--port 8089' },
  {
    name: 'listen',
    type: 'string',
    value: 'ADDRESS',
    meaning: 'address to listen on',
    format: 'an IPv4/IPv6 address',
    default: '127.0.0.1 (this host only)',
    example: '--listen 0.0.0.0',
  },
  {
    name: 'cors-origin',
    type: 'string',
    value: 'ORIGINS',
    meaning: 'Web UI origins the browser may call from (CORS)',
    format: 'comma-separated origins (scheme://host:port), or *',
    default: "the embedded default's Web UI (http://localhost:8233 and http://127.0.0.1:8233)",
    example: '--cors-origin https://temporal.example.com',
  },
  {
    name: 'token-file',
    type: 'string',
    value: 'FILE',
    meaning: 'file holding the bearer token',
    format: 'a path',
    default: `$GPUPROV_CODEC_TOKEN_FILE, else $${TOKEN_VAR}`,
    example: '--token-file ~/.config/gpuprov/codec-token',
  },
  {
    name: 'namespace',
    type: 'string',
    value: 'NAMES',
    meaning: 'namespaces served (X-Namespace header)',
    format: 'comma-separated',
    default: 'any',
    example: '--namespace default',
  },
] as const;

const NOTES = `Keys: ${KEYS_VAR} or ${KEYS_FILE_VAR} (ID=BASE64 entries, the first encrypts), as the worker has them.
Every POST needs the token: "Authorization: Bearer TOKEN" (temporal ... --codec-endpoint http://127.0.0.1:8089
--codec-auth "Bearer $${TOKEN_VAR}"), or the endpoint http://127.0.0.1:8089/TOKEN for the Web UI, which sends
an Authorization header only with its own login (temporal server start-dev --ui-codec-endpoint URL, or the
UI's Codec Server setting). Answers 401 without it. The token, keys and payloads are never printed.`;

function origins(v: string | undefined, env: NodeJS.ProcessEnv): string[] {
  if (v === undefined) {
    const ui = new URL(embeddedConfig(env).uiUrl);
    return [ui.origin, `${ui.protocol}//127.0.0.1:${ui.port}`];
  }
  const list = v.split(',').map((s) => s.trim());
  for (const o of list) {
    if (o === '*') continue;
    let ok = false;
    try {
      ok = new URL(o).origin === o;
    } catch {
      ok = false;
    }
    if (!ok)
      throw new InputError(
        '--cors-origin',
        `${show(o)} is not an origin`,
        'give scheme://host[:port] without a path, e.g. --cors-origin http://localhost:8233',
      );
  }
  return list;
}

type Values = { port?: string; listen?: string; 'cors-origin'?: string; 'token-file'?: string; namespace?: string };

async function serve(values: Values, io: Io, json: boolean): Promise<number> {
  const port = portFlag(values.port, DEFAULT_PORT);
  const corsOrigins = origins(values['cors-origin'], io.env);
  const token = codecToken(io.env, values['token-file']);
  const codec = codecFromEnv(io.env);
  if (!codec)
    throw new InputError(
      KEYS_VAR,
      `no keys: set ${KEYS_VAR} or ${KEYS_FILE_VAR}`,
      'give the keys the worker has, e.g. GPUPROV_CODEC_KEYS_FILE=~/.config/gpuprov/codec-keys',
    );
  const namespaces = values.namespace?.split(',').map((s) => s.trim()) ?? [];
  const server = createCodecServer({ codec, token, corsOrigins, namespaces, log: (l) => errLine(io, l) });
  const listen = values.listen ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(new CommandFailure(`cannot listen on ${listen}:${port}: ${err.code ?? err.message}`, 'pick another --port or --listen')),
    );
    server.listen(port, listen, resolve);
  });
  const url = `http://${listen.includes(':') ? `[${listen}]` : listen}:${(server.address() as AddressInfo).port}`;
  errLine(io, `Codec server on ${url} (CORS: ${corsOrigins.join(', ')}). Web UI endpoint: ${url}/<token>. Ctrl-C stops it.`);
  outLine(io, json ? JSON.stringify({ ok: true, endpoint: url, corsOrigins }) : `codec endpoint: ${url}`);
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      server.close(() => resolve());
      server.closeAllConnections();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  return EXIT_OK;
}

export const codecServerCommand: Command = leaf({
  name: 'codec-server',
  summary: 'serve the payload codec to the Web UI and the temporal CLI (encrypted payloads readable)',
  flags: FLAGS,
  notes: NOTES,
  run: ({ values, json }, io) => serve(values, io, json),
});
