/**
 * End to end, as a new user would: the `provision` CLI as a separate process with a temporary
 * HOME, the embedded default (its own dev server + worker daemon), the local cloud (real sshd),
 * plain `ssh` with the written config, and a browser look at the Web UI.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { countLive } from '../../src/providers/local';
import { freePort } from '../../src/ports';
import { requireServer, requireTool } from '../harness/temporal';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const haveSshd = existsSync('/usr/sbin/sshd');
const haveChromium = existsSync('/usr/bin/chromium');

describe.skipIf(!requireServer() || !requireTool('sshd', haveSshd, 'apt-get install -y openssh-server'))('the CLI as a new user types it', () => {
  let home: string;
  let env: NodeJS.ProcessEnv;
  let uiPort: number;
  const provision = async (...args: string[]): Promise<{ code: number; out: string; err: string }> => {
    try {
      const r = await run(process.execPath, [join(ROOT, 'bin', 'provision.js'), ...args], { env, cwd: ROOT, timeout: 240_000 });
      return { code: 0, out: r.stdout, err: r.stderr };
    } catch (e) {
      const x = e as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof x.code === 'number' ? x.code : 1, out: x.stdout ?? '', err: x.stderr ?? '' };
    }
  };

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'gpuprov-e2e-home-'));
    mkdirSync(join(home, '.ssh'), { mode: 0o700 });
    uiPort = await freePort();
    env = {
      PATH: process.env.PATH,
      HOME: home,
      TEMPORAL_CLI_PATH: inject('temporalCliPath'),
      GPUPROV_EMBEDDED_PORT: String(await freePort()),
      GPUPROV_EMBEDDED_UI_PORT: String(uiPort),
    };
  });
  afterAll(async () => {
    await provision('server', 'stop');
  });

  it('start → ssh NAME true → list shows ready → browser finds it → down → list empty → no sshd left', async () => {
    const start = await provision('start', '--name', 'e2e1');
    expect(start.code, start.err).toBe(0);
    expect(start.err).toContain('started the embedded default');
    expect(start.err).toContain('local test cloud');
    expect(start.out).toContain('ssh e2e1');
    const cloudRoot = join(home, '.local', 'state', 'gpuprov', 'local-cloud');
    expect(countLive(cloudRoot)).toBe(1);

    // Plain ssh, with host-key checking on, through the Include line written into ~/.ssh/config.
    const hello = execFileSync('ssh', ['-F', join(home, '.ssh', 'config'), '-o', 'BatchMode=yes', 'e2e1', 'echo ok-$((40+2))'], { encoding: 'utf8', env });
    expect(hello.trim()).toBe('ok-42');

    const again = await provision('start', '--name', 'e2e1', '--json');
    expect(again.code, again.err).toBe(0);
    expect(again.err).toBe('');
    expect(JSON.parse(again.out)).toMatchObject({ ok: true, status: { stage: 'ready', name: 'e2e1' } });
    expect(countLive(cloudRoot)).toBe(1);

    const list = await provision('list', '--json');
    expect(list.code, list.err).toBe(0);
    expect(JSON.parse(list.out)).toEqual([expect.objectContaining({ name: 'e2e1', stage: 'ready', cloud: 'local' })]);

    if (requireTool('chromium', haveChromium, 'apt-get install -y chromium')) {
      const { lookInWebUi } = await import('./web-ui');
      const seen = await lookInWebUi(`http://127.0.0.1:${uiPort}`, 'vm-e2e1', join(ROOT, 'test-artifacts', 'web-ui-vm-e2e1.png'));
      expect(seen.listed).toBe(true);
      expect(seen.detailText).toContain('GpuprovStage');
      expect(seen.detailText).toContain('ready');
      expect(seen.detailText).toContain('VM e2e1');
    }

    const down = await provision('down', 'e2e1');
    expect(down.code, down.err).toBe(0);
    expect(down.out).toContain('nothing is billed');
    const after = await provision('list', '--json');
    expect(JSON.parse(after.out)).toEqual([]);
    expect(countLive(cloudRoot)).toBe(0);
    expect(existsSync(join(home, '.config', 'gpuprov', 'ssh', 'config.d', 'e2e1.conf'))).toBe(false);

    // `down` again on the ended VM: already gone is success, not "no such VM".
    const downAgain = await provision('down', 'e2e1');
    expect(downAgain.code, downAgain.err).toBe(0);
    expect(downAgain.out).toContain('already gone');
  });
});
