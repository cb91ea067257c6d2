import { readFile } from 'node:fs/promises';
import { Client, type ClientChannel } from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InstanceSpec, Location } from '../../src/core/provider';
import { makeClientKey, makeCloud, waitFor, type LocalCloud } from './local/helpers';
import { planned } from './planned';

const A: Location = { cloud: 'local', region: 'local-a' };

describe('built-in SSH server: a terminal follows its window', () => {
  let cloud: LocalCloud;
  beforeAll(async () => {
    cloud = await makeCloud('local-pty', 'builtin');
  });
  afterAll(async () => {
    await cloud?.close();
  });

  it('window-changes sent back to back are applied in order, before the keys typed after them', async () => {
    const { key, pub } = await makeClientKey(cloud.root);
    const offer = (await planned(cloud.provider, { vmName: 'pty', k8s: false, regions: ['local-a'] }))[0]!;
    const s: InstanceSpec = { vmName: 'pty', owner: 'local-test', publicKeys: [pub], idempotencyKey: 'pty-key', openPorts: [22] };
    const id = await cloud.provider.create(offer, await cloud.provider.prepare(offer, s), s);
    const [inst] = await waitFor(
      () => cloud.provider.observe(A, 'pty'),
      (o) => o.some((x) => x.status === 'Running' && x.endpoint !== undefined),
    );
    const ep = inst!.endpoint!;
    const privateKey = await readFile(key, 'utf8');
    const client = new Client();
    await new Promise<void>((resolve, reject) => {
      client.on('ready', () => resolve()).on('error', reject);
      client.connect({ host: ep.host, port: ep.port, username: ep.user, privateKey, readyTimeout: 10_000 });
    });
    try {
      const shell = await new Promise<ClientChannel>((resolve, reject) =>
        client.shell({ rows: 30, cols: 120, term: 'xterm' }, (err, ch) => (err ? reject(err) : resolve(ch))),
      );
      let screen = '';
      shell.on('data', (d: Buffer) => (screen += d.toString()));
      await waitFor(
        async () => screen,
        (t) => /[$#] *$/m.test(t),
      );
      for (let cols = 121; cols <= 140; cols++) shell.setWindow(25 + (cols % 3), cols, 0, 0);
      shell.setWindow(25, 100, 0, 0);
      shell.write('echo size-$(stty size | tr " " x)\n');
      const shown = await waitFor(
        async () => screen,
        (t) => /^size-\d+x\d+\s*$/m.test(t),
      );
      expect(/^size-\d+x\d+/m.exec(shown)?.[0]).toBe('size-25x100');
      shell.end('exit\n');
    } finally {
      client.end();
      await cloud.provider.delete(A, 'pty', [id]);
    }
  });
});
