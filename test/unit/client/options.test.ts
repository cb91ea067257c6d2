import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDuration, parseGpu, parseStart } from '../../../src/client/options';
import { InputError } from '../../../src/core/errors';
import { parseShape } from '../../../src/client/fleet-schema';
import { removeSshEntry, userKey, writeSshEntry } from '../../../src/client/user-files';

describe('start options', () => {
  it('parses a full command line into a VmSpec', () => {
    const o = parseStart(['--name', 'gpu1', '--gpu', 'h100:8', '--cloud', 'aws,gcp', '--region', 'us-east-1', '--max-price', '40', '--ttl', '1h30m', '--retry-until-up', '--no-k8s', '--detach']);
    expect(o.spec).toEqual({ name: 'gpu1', gpu: { model: 'H100', count: 8 }, clouds: ['aws', 'gcp'], regions: ['us-east-1'], maxPricePerHour: 40, ttlMs: 5_400_000, retryUntilUp: true, k8s: 'off' });
    expect(o.detach).toBe(true);
  });
  it('defaults: k8s auto, one GPU, name as positional', () => {
    expect(parseStart(['gpu2', '--gpu', 'A100-80GB']).spec).toEqual({ name: 'gpu2', gpu: { model: 'A100-80GB', count: 1 }, k8s: 'auto' });
  });
  it('--k8s with a mix of clouds keeps the ones that can run it', () => {
    expect(parseStart(['--name', 'k', '--cloud', 'aws,local', '--k8s']).spec.k8s).toBe('on');
  });
  it.each([
    ['H100', { model: 'H100', count: 1 }],
    ['H100:8', { model: 'H100', count: 8 }],
    ['h100:4+', { model: 'H100', count: 4, atLeast: true }],
    ['H100+', { model: 'H100', count: 1, atLeast: true }],
    ['a100-80gb:2', { model: 'A100-80GB', count: 2 }],
  ])('--gpu %s: exact unless N+', (text, gpu) => {
    expect(parseGpu(text)).toEqual(gpu);
    expect(parseStart(['g', '--gpu', text]).spec.gpu).toEqual(gpu);
  });
  it.each(['H100:', 'H100:+', 'H100:4++', 'H100+4', 'H100:4 +', '+', ':4+', 'H100:0+', 'H100:17+'])('--gpu %s is rejected naming the flag and the N+ form', (text) => {
    let err: unknown;
    try {
      parseGpu(text);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).field).toBe('--gpu');
    expect((err as InputError).suggestion).toMatch(/--gpu (H100|A100):4\+/);
  });
  it('a fleet shape takes the same GPU ask as an object (atLeast: true is N+)', () => {
    const group = (gpu: unknown) => ({ name: 'f', generation: 1, groups: [{ id: 'g', role: 'w', count: 1, vm: { gpu } }] });
    expect(parseShape(group({ model: 'H100', count: 4, atLeast: true })).groups[0]!.vm.gpu).toEqual({ model: 'H100', count: 4, atLeast: true });
    expect(parseShape(group({ model: 'H100', count: 1 })).groups[0]!.vm.gpu).toEqual({ model: 'H100', count: 1 });
    expect(() => parseShape(group({ model: 'H100', count: 1, atLeast: 'yes' }))).toThrow(/gpu\.atLeast/);
  });
  it('gpu and durations', () => {
    expect(parseGpu('t4')).toEqual({ model: 'T4', count: 1 });
    expect(parseDuration('--ttl', '2d')).toBe(172_800_000);
    expect(parseDuration('--ttl', '1m')).toBe(60_000);
  });
});

describe("files on the user's machine", () => {
  it('writes an ssh entry Included from ~/.ssh/config (backed up once), pins the host key, removes it on down', async () => {
    const home = mkdtempSync(join(tmpdir(), 'gpuprov-home-'));
    const env = { HOME: home };
    mkdirSync(join(home, '.ssh'));
    writeFileSync(join(home, '.ssh', 'config'), 'Host old\n  HostName example\n');
    const key = await userKey(env);
    expect(key.publicKey).toMatch(/^ssh-ed25519 /);
    expect(statSync(key.privateKeyPath).mode & 0o777).toBe(0o600);
    const entry = await writeSshEntry(env, 'gpu1', { host: '127.0.0.1', port: 2222 }, 'ubuntu', key, 'ssh-ed25519 AAAAhostkey');
    await writeSshEntry(env, 'gpu1', { host: '127.0.0.1', port: 2223 }, 'ubuntu', key, 'ssh-ed25519 AAAAnewkey');
    const cfg = readFileSync(join(home, '.ssh', 'config'), 'utf8');
    expect(cfg.match(/^Include /gm)).toHaveLength(1);
    expect(cfg.indexOf('Include')).toBeLessThan(cfg.indexOf('Host old'));
    expect(readFileSync(join(home, '.ssh', 'config.gpuprov-backup'), 'utf8')).toBe('Host old\n  HostName example\n');
    expect(readFileSync(entry, 'utf8')).toContain('Port 2223');
    expect(statSync(entry).mode & 0o777).toBe(0o600);
    const known = readFileSync(join(home, '.config', 'gpuprov', 'ssh', 'known_hosts'), 'utf8');
    expect(known).toBe('gpuprov-gpu1 ssh-ed25519 AAAAnewkey\n');
    await removeSshEntry(env, 'gpu1');
    expect(existsSync(entry)).toBe(false);
    expect(readFileSync(join(home, '.config', 'gpuprov', 'ssh', 'known_hosts'), 'utf8')).toBe('');
  });
});
