/** connectClient: configured server, a server on the embedded address, or a clear error. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import type { Io } from '../../../src/client/command';
import { connectClient, TemporalNotRunningError } from '../../../src/client/connect';
import { freePort } from '../../../src/ports';
import { requireServer } from '../../harness/temporal';

let home: string;
beforeEach(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'gpuprov-connect-'));
});
afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

function io(env: NodeJS.ProcessEnv): Io & { stderr: string[] } {
  const stderr: string[] = [];
  return { stderr, out: () => undefined, err: (s) => stderr.push(s), isTTY: false, env };
}

const baseEnv = (extra: Record<string, string>): NodeJS.ProcessEnv => ({
  HOME: home,
  PATH: process.env.PATH,
  GPUPROV_STATE_DIR: path.join(home, 'state'),
  ...extra,
});

describe('connectClient', () => {
  it('without autoStart and with nothing running, tells the user what to do', async () => {
    const env = baseEnv({ GPUPROV_EMBEDDED_PORT: String(await freePort()), GPUPROV_EMBEDDED_UI_PORT: String(await freePort()) });
    const err = await connectClient(io(env), { autoStart: false }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TemporalNotRunningError);
    expect((err as Error).message).toContain('npx provision server start');
    expect((err as Error).message).toContain('TEMPORAL_ADDRESS');
    expect(fs.existsSync(path.join(home, 'state', 'run'))).toBe(false);
  });

  it.skipIf(!requireServer())('connects to TEMPORAL_ADDRESS and can talk to it', async () => {
    const c = await connectClient(io(baseEnv({ TEMPORAL_ADDRESS: inject('temporalAddress') })), { autoStart: false });
    try {
      expect(c).toMatchObject({ address: inject('temporalAddress'), namespace: 'default', startedEmbedded: false });
      const info = await c.connection.workflowService.getSystemInfo({});
      expect(info.capabilities).toBeTruthy();
    } finally {
      await c.connection.close();
    }
  });

  it.skipIf(!requireServer())('connects to a server already answering on the embedded address without starting anything', async () => {
    const port = inject('temporalAddress').split(':')[1]!;
    const c = await connectClient(io(baseEnv({ GPUPROV_EMBEDDED_PORT: port })), { autoStart: true });
    try {
      expect(c).toMatchObject({ address: `127.0.0.1:${port}`, startedEmbedded: false, uiUrl: undefined });
      expect(fs.existsSync(path.join(home, 'state', 'run'))).toBe(false);
    } finally {
      await c.connection.close();
    }
  });
});
