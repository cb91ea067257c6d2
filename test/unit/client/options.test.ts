import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDuration, parseGpu } from '../../../src/client/flag-values';
import { parseStart } from '../../../src/client/options';
import { parseShape } from '../../../src/client/fleet-schema';
import { parseCommandLine, show, type FlagSpec } from '../../../src/client/flags';
import { publicKeyProblem, vmOptionsSchema } from '../../../src/client/vm-spec';
import { InputError } from '../../../src/core/errors';
import { generateEd25519 } from '../../../src/ssh/keygen';
import { removeSshEntry, userKey, writeSshEntry } from '../../../src/client/user-files';

describe('start options', () => {
  it('parses a full command line into a VmSpec', () => {
    const o = parseStart([
      '--name',
      'gpu1',
      '--gpu',
      'h100:8',
      '--cloud',
      'aws,gcp',
      '--region',
      'us-east-1',
      '--max-price',
      '40',
      '--ttl',
      '1h30m',
      '--retry-until-up',
      '--no-k8s',
      '--detach',
    ]);
    expect(o.spec).toEqual({
      name: 'gpu1',
      gpu: { model: 'H100', count: 8 },
      clouds: ['aws', 'gcp'],
      regions: ['us-east-1'],
      maxPricePerHour: 40,
      ttlMs: 5_400_000,
      retryUntilUp: true,
      k8s: 'off',
    });
    expect(o.detach).toBe(true);
  });
  it('defaults: k8s auto, one GPU, name as positional', () => {
    expect(parseStart(['gpu2', '--gpu', 'A100-80GB']).spec).toEqual({ name: 'gpu2', gpu: { model: 'A100-80GB', count: 1 }, k8s: 'auto' });
  });
  it('--image and --disk-gb reach the VmSpec; with several clouds one that can honour them is enough (the plan skips the rest)', () => {
    expect(parseStart(['g', '--cloud', 'aws', '--image', 'ami-0abcdef1234567890', '--disk-gb', '200']).spec).toMatchObject({
      image: 'ami-0abcdef1234567890',
      diskGb: 200,
    });
    expect(parseStart(['g', '--cloud', 'aws,local', '--image', 'ami-0abcdef1234567890']).spec.image).toBe('ami-0abcdef1234567890');
    expect(parseStart(['g', '--image', 'nvidia/cuda:12.4.1-runtime-ubuntu22.04']).spec.image).toBe('nvidia/cuda:12.4.1-runtime-ubuntu22.04');
    expect(parseStart(['g', '--cloud', 'gcp', '--image', 'projects/ubuntu-os-cloud/global/images/family/ubuntu-2204-lts']).spec.image).toContain('family/');
    const shape = parseShape({
      name: 'f',
      generation: 1,
      groups: [{ id: 'g', role: 'w', count: 1, vm: { clouds: ['vastai'], image: 'nvidia/cuda:12.4.1-runtime-ubuntu22.04', diskGb: 100 } }],
    });
    expect(shape.groups[0]!.vm).toMatchObject({ image: 'nvidia/cuda:12.4.1-runtime-ubuntu22.04', diskGb: 100 });
  });
  it('--parallel N reaches the VmSpec (absent: serial); a fleet shape takes vm.parallel within the same bounds', () => {
    expect(parseStart(['g', '--parallel', '3']).spec.parallel).toBe(3);
    expect(parseStart(['g']).spec.parallel).toBeUndefined();
    const shape = (parallel: unknown) => ({ name: 'f', generation: 1, groups: [{ id: 'g', role: 'w', count: 1, vm: { parallel } }] });
    expect(parseShape(shape(2)).groups[0]!.vm.parallel).toBe(2);
    expect(() => parseShape(shape(9))).toThrow(/parallel/);
    expect(() => parseShape(shape(1.5))).toThrow(/parallel/);
  });
  it('--recover reaches the VmSpec (absent: off); a fleet shape refuses vm.recover (the fleet replaces lost slots)', () => {
    expect(parseStart(['g', '--recover']).spec.recover).toBe(true);
    expect(parseStart(['g']).spec.recover).toBeUndefined();
    expect(() => parseStart(['g', '--recover=yes'])).toThrow(/--recover takes no value/);
    expect(parseStart(['g', '--no-recover']).spec.recover).toBeUndefined();
    expect(() => parseStart(['g', '--recover', '--no-recover'])).toThrow(/contradict/);
    expect(() => parseShape({ name: 'f', generation: 1, groups: [{ id: 'g', role: 'w', count: 1, vm: { recover: true } }] })).toThrow(/recover/);
  });
  it.each<[string[], { spot?: string; recover?: boolean }]>([
    [['g', '--spot'], { spot: 'only', recover: true }],
    [['g', '--spot', 'auto'], { spot: 'auto', recover: true }],
    [['g', '--spot=only'], { spot: 'only', recover: true }],
    [['--spot', 'g'], { spot: 'only', recover: true }],
    [['g', '--spot', '--no-recover'], { spot: 'only' }],
    [['g', '--spot', 'auto', '--no-recover'], { spot: 'auto' }],
    [['g', '--spot', 'auto', '--cloud', 'local'], { spot: 'auto', recover: true }],
  ])('start %j: spot and recover (on by default under --spot)', (args, want) => {
    const { spot, recover } = parseStart(args).spec;
    expect({ ...(spot ? { spot } : {}), ...(recover ? { recover } : {}) }).toEqual(want);
  });
  it.each<[string[], RegExp]>([
    [['g', '--spot=always'], /"always" is not a spot mode/],
    [['g', '--spot', 'atuo'], /--spot "atuo" is not one of only, auto/],
    [['g', '--spot', 'always'], /after --spot: --spot takes only or auto/],
    [['g', '--spot', '--spot', 'auto'], /given twice/],
    [['g', '--spot', '--cloud', 'local'], /local sells no spot/],
  ])('start %j is refused, naming --spot', (args, message) => {
    let err: unknown;
    try {
      parseStart(args);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).field).toBe('--spot');
    expect((err as Error).message).toMatch(message);
  });
  it('a fleet group takes spot (only or auto), refuses any other value and spot only on clouds that sell none', () => {
    const shape = (vm: unknown) => ({ name: 'f', generation: 1, groups: [{ id: 'g', role: 'w', count: 1, vm }] });
    expect(parseShape(shape({ spot: 'auto' })).groups[0]!.vm.spot).toBe('auto');
    expect(() => parseShape(shape({ spot: 'always' }))).toThrow(/spot must be only or auto/);
    expect(() => parseShape(shape({ spot: 'only', clouds: ['local', 'docker'] }))).toThrow(/spot: local sells no spot .*; docker sells no spot/);
    expect(parseShape(shape({ spot: 'auto', clouds: ['local'] })).groups[0]!.vm).toEqual({ spot: 'auto', clouds: ['local'] });
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
  it.each(['H100:', 'H100:+', 'H100:4++', 'H100+4', 'H100:4 +', '+', ':4+', 'H100:0+', 'H100:17+'])(
    '--gpu %s is rejected naming the flag and the N+ form',
    (text) => {
      let err: unknown;
      try {
        parseGpu(text);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(InputError);
      expect((err as InputError).field).toBe('--gpu');
      expect((err as InputError).suggestion).toMatch(/--gpu (H100|A100):4\+/);
    },
  );
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

function inputError(f: () => unknown): InputError {
  try {
    f();
  } catch (err) {
    if (err instanceof InputError) return err;
    throw err;
  }
  throw new Error('no InputError');
}

describe('the flag parser', () => {
  const FLAGS = [
    { name: 'name', type: 'string', meaning: 'm', default: 'd', example: '--name a' },
    { name: 'k8s', type: 'boolean', negatable: true, meaning: 'm', default: 'd', example: '--k8s' },
    { name: 'file', short: 'f', type: 'string', meaning: 'm', default: 'd', example: '-f x' },
    { name: 'json', type: 'boolean', meaning: 'm', default: 'd', example: '--json' },
  ] as const satisfies readonly FlagSpec[];
  const cl = { path: 'test', flags: FLAGS, args: [{ name: 'NAME', meaning: 'the name', example: 'a', required: false, flag: 'name' }] };

  it('reads --flag value, --flag=value, -f value, --no-flag and the argument that stands for a flag', () => {
    expect(parseCommandLine(cl, ['--name', 'a', '--k8s', '-f', 'x']).values).toEqual({ name: 'a', k8s: true, file: 'x' });
    expect(parseCommandLine(cl, ['--name=a=b', '--no-k8s']).values).toEqual({ name: 'a=b', k8s: false });
    expect(parseCommandLine(cl, ['a', '--json'])).toEqual({ values: { name: 'a', json: true }, args: ['a'], rest: [] });
  });
  it('refuses repeats, contradictions, stray words, one-dash long flags and missing values', () => {
    expect(inputError(() => parseCommandLine(cl, ['--name', 'a', '--name', 'a'])).message).toContain('given twice');
    expect(inputError(() => parseCommandLine(cl, ['--no-k8s', '--k8s'])).message).toBe('--no-k8s and --k8s contradict each other');
    expect(inputError(() => parseCommandLine(cl, ['-f', 'x', '--file', 'y'])).field).toBe('--file');
    expect(inputError(() => parseCommandLine(cl, ['--name', 'a', 'b'])).field).toBe('--name');
    expect(inputError(() => parseCommandLine(cl, ['a', 'b'])).field).toBe('arguments');
    expect(inputError(() => parseCommandLine(cl, ['a', '--', 'b'])).field).toBe('arguments');
    expect(inputError(() => parseCommandLine(cl, ['-name', 'a'])).suggestion).toContain('did you mean --name?');
    expect(inputError(() => parseCommandLine(cl, ['--name', '--json'])).message).toContain('--name needs a value');
    expect(inputError(() => parseCommandLine(cl, ['--json=1'])).message).toContain('takes no value');
    expect(inputError(() => parseCommandLine(cl, ['--no-json'])).suggestion).toContain('leave --json out');
  });
  it('takes a negative number as a value, not as a flag', () => {
    expect(parseCommandLine(cl, ['--name', '-3']).values).toEqual({ name: '-3' });
  });
  it('shows text JSON-style with invisible characters escaped', () => {
    expect(show('a\u200bb\u0007\n')).toBe('"a\\u200bb\\u0007\\n"');
    expect(show('plain text')).toBe('"plain text"');
  });
});

describe('the VM spec schema (start and fleet shapes)', () => {
  it('accepts an OpenSSH public key and refuses garbage or a private key', () => {
    expect(publicKeyProblem(generateEd25519('t').public)).toBeUndefined();
    expect(publicKeyProblem('garbage')).toMatch(/key type/);
    expect(publicKeyProblem('ssh-ed25519 AAAAC3NzaC1lZDI1NTE5')).toMatch(/not a valid ssh-ed25519 key/);
    expect(publicKeyProblem('ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4')).toMatch(/not a valid ssh-rsa key/);
    expect(publicKeyProblem('-----BEGIN OPENSSH PRIVATE KEY-----')).toMatch(/PRIVATE/);
  });
  it.each([
    [{ ttlMs: 59_999 }, 'TTL 59999ms is out of range: use 1m to 30d'],
    [{ ttlMs: 31 * 86_400_000 }, 'TTL 31d is out of range'],
    [{ maxPricePerHour: 0.001 }, 'price cap 0.001 USD/h is out of range: use 0.01 USD/h to 1000 USD/h'],
    [{ gpu: { model: 'H100', count: 0 } }, 'GPU count must be at least 1'],
    [{ clouds: [] }, 'name at least one cloud'],
    [{ clouds: ['lambda'], regions: ['us-east-9'] }, 'did you mean us-east-1?'],
    [{ clouds: ['docker'], k8s: 'on' }, 'docker cannot run k3s'],
    [{ k8s: 'yes' }, 'k8s must be auto, on or off'],
  ])('%o is refused: %s', (vm, message) => {
    const r = vmOptionsSchema.safeParse(vm);
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => i.message).join('; ')).toContain(message);
  });
  it("keeps a fleet's vm: as written and the bounds inclusive", () => {
    expect(vmOptionsSchema.parse({ gpu: { model: 'h100', count: 16 }, ttlMs: 60_000, maxPricePerHour: 1000 })).toEqual({
      gpu: { model: 'h100', count: 16 },
      ttlMs: 60_000,
      maxPricePerHour: 1000,
    });
    expect(parseStart(['g', '--ttl', '30d', '--max-price', '0.01']).spec).toMatchObject({ ttlMs: 30 * 86_400_000, maxPricePerHour: 0.01 });
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
