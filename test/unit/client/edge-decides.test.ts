/**
 * The edge decides before anything starts: a GPU count written as a multiplier, an unknown or
 * misspelt GPU model, a list naming a value twice, an empty flag value and a TEMPORAL_CLI_PATH
 * that is no working CLI all exit 2 naming the field and the fix, with no server contacted or
 * started and no workflow begun. The decisions themselves (src/core/gpu-models.ts,
 * src/client/flag-values.ts, cliPathProblem) are tabled first; then every bad input through the
 * CLI in-process (text and --json), then a few through the real bin.
 */
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startCountingListener, type CountingListener } from '../../harness/counting-listener';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/client/cli';
import { recordingIo, type RecordingIo } from '../../harness/recording-io';
import { listValue, parseGpu } from '../../../src/client/flag-values';
import { InputError } from '../../../src/core/errors';
import { countAsMultiplier, gpuModelProblem, isKnownGpuModel, KNOWN_GPU_MODELS } from '../../../src/core/gpu-models';
import { cliPathProblem } from '../../../src/server/temporal-cli';

const ROOT = join(__dirname, '..', '..', '..');
let dir: string;
let listener: CountingListener;
let port: number;
/** A port nothing listens on: the embedded default's, so nothing answers there. */
let closedPort: number;

const freePort = async (): Promise<number> => {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const p = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return p;
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gpuprov-edge-'));
  listener = await startCountingListener();
  port = listener.port;
  closedPort = await freePort();
  const script = (name: string, body: string, mode = 0o755): void => {
    writeFileSync(join(dir, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(dir, name), mode);
  };
  // Would-be temporal CLIs: none of them is one.
  script('fails', 'echo "boom" >&2; exit 1');
  script('other-tool', 'echo "docker version 27.0"; exit 0');
  script('silent', 'exit 0');
  script('not-executable', 'echo "temporal version 1.5.1"', 0o644);
  mkdirSync(join(dir, 'a-directory'));
  const shape = (vm: unknown): string => JSON.stringify({ name: 'f', generation: 1, groups: [{ id: 'a', role: 'w', count: 1, vm }] });
  const shapes: Record<string, unknown> = {
    'gpu-typo': { gpu: { model: 'H10', count: 1 } },
    'gpu-multiplier': { gpu: { model: 'H100x8', count: 1 } },
    'gpu-unknown': { gpu: { model: 'FOO', count: 2 } },
    'gpu-word-after': { gpu: { model: 'A100-XL', count: 1 } },
    'clouds-twice': { clouds: ['aws', 'gcp', 'aws'] },
    'regions-twice': { regions: ['us-east-1', 'us-east-1'] },
    'types-twice': { instanceTypes: ['g5.xlarge', 'g5.xlarge'] },
  };
  for (const [name, vm] of Object.entries(shapes)) writeFileSync(join(dir, `${name}.yaml`), shape(vm));
});
afterAll(() => listener?.close());

type World = RecordingIo;

function world(extraEnv: Record<string, string> = {}): World {
  const home = mkdtempSync(join(dir, 'home-'));
  mkdirSync(join(home, '.ssh'));
  const o: World = recordingIo({
    HOME: home,
    PATH: process.env.PATH,
    TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
    GPUPROV_EMBEDDED_PORT: String(port),
    GPUPROV_STATE_DIR: join(home, 'state'),
    TEMPORAL_CLI_PATH: join(dir, 'fails'),
    ...extraEnv,
  });
  for (const [k, v] of Object.entries(extraEnv)) if (v === '') delete o.env[k];
  return o;
}

function nothingStarted(o: World): void {
  expect(listener.connections(), 'a server was contacted').toBe(0);
  expect(existsSync(join(o.env.GPUPROV_STATE_DIR ?? '', 'run')), 'the embedded default was started').toBe(false);
}

/** [argv ($ = the fixtures dir), the field the error must name, extra env ('' unsets)]. */
type Case = [string[], string, Record<string, string>?];

const gpu = (text: string, cmd: 'start' | 'offers' = 'start'): Case => [
  cmd === 'start' ? ['start', '--name', 'g', '--gpu', text] : ['offers', '--gpu', text],
  '--gpu',
];
const flag = (name: string, text: string, cmd: 'start' | 'offers' = 'start'): Case => [
  cmd === 'start' ? ['start', '--name', 'g', `--${name}`, text] : ['offers', `--${name}`, text],
  `--${name}`,
];
/** The embedded default would be started (nothing configured, nothing on its port): TEMPORAL_CLI_PATH is checked first. */
const cliPath = (argv: string[], path: string): Case => [
  argv,
  'TEMPORAL_CLI_PATH',
  { TEMPORAL_CLI_PATH: path, TEMPORAL_ADDRESS: '', GPUPROV_EMBEDDED_PORT: 'CLOSED' },
];

const MULTIPLIERS = [
  'H100x8',
  'h100x8',
  'H100X8',
  '8xH100',
  '8XH100',
  '8*H100',
  '8 x H100',
  'H100*8',
  'H100×8',
  'H100 x 8',
  'H100 x8',
  'H100/8',
  'H100=8',
  'H100,8',
  'H100_8',
  'H100 8',
  'A100x4',
  'RTX4090x2',
  'L40Sx4',
  'T4x1',
  'MI300Xx8',
  'B200x8',
  '16xA100',
  'H10x8',
];
const UNKNOWN_MODELS = [
  'H10',
  'H1000',
  'H100S',
  'A1OO',
  'A10O:2+',
  'L4S',
  'L40SS',
  'T5',
  'V10',
  'RTX4909',
  'RTX',
  'NVIDIA',
  'SXM',
  'GPU',
  'TESLA',
  'FOO',
  'FOO:2',
  'H100-FOO',
  'A100-XL',
  'K8S',
  'TPU',
  'TPUV5',
  'MI3000X',
  'GAUDI',
  'B20',
  'H2000:4',
  'CPU',
  'NONE',
  'ANY',
  'AUTO',
  'h10:8',
  'X100',
];

const CASES: Case[] = [
  ...MULTIPLIERS.map((t) => gpu(t)),
  gpu('H100x8', 'offers'),
  gpu('8xA100', 'offers'),
  ...UNKNOWN_MODELS.map((t) => gpu(t)),
  gpu('H10', 'offers'),
  gpu('A1OO', 'offers'),
  gpu('FOO', 'offers'),
  gpu('RTX4909', 'offers'),
  // lists naming a value twice, or with an empty item
  flag('cloud', 'aws,aws'),
  flag('cloud', 'aws, aws'),
  flag('cloud', 'gcp,aws,gcp'),
  flag('cloud', 'local,local'),
  flag('cloud', ','),
  flag('cloud', 'aws,'),
  flag('region', 'r,r'),
  flag('region', 'us-east-1,us-east-1'),
  flag('region', 'a,b,a'),
  flag('region', ',us-east-1'),
  flag('instance-type', 'g5.xlarge,g5.xlarge'),
  flag('cloud', 'aws,aws', 'offers'),
  flag('region', 'us-east-1,us-east-1', 'offers'),
  flag('instance-type', 'a,a', 'offers'),
  // empty values: read as the flag left out, they are refused
  flag('ssh-key', ''),
  flag('ssh-key', ' '),
  [['start', '--name', 'g', '--ssh-key='], '--ssh-key'],
  flag('gpu', ''),
  [['start', '--name', 'g', '--gpu='], '--gpu'],
  flag('cloud', ''),
  flag('region', ''),
  flag('instance-type', ''),
  flag('image', ''),
  flag('ttl', ''),
  flag('budget', ''),
  flag('parallel', ''),
  flag('max-price', ''),
  flag('disk-gb', ''),
  [['start', '--name', ''], '--name'],
  flag('gpu', '', 'offers'),
  flag('cloud', '', 'offers'),
  [['kubeconfig', 'g', '--out', ''], '--out'],
  [['kubeconfig', 'g', '--identity', ''], '--identity'],
  [['tunnel', 'g', '--identity', ''], '--identity'],
  [['fleet', 'apply', '-f', ''], '--file'],
  // fleet shapes: the same schema
  [['fleet', 'apply', '-f', '$/gpu-typo.yaml'], '-f'],
  [['fleet', 'apply', '-f', '$/gpu-multiplier.yaml'], '-f'],
  [['fleet', 'apply', '-f', '$/gpu-unknown.yaml'], '-f'],
  [['fleet', 'apply', '-f', '$/gpu-word-after.yaml'], '-f'],
  [['fleet', 'apply', '-f', '$/clouds-twice.yaml'], '-f'],
  [['fleet', 'apply', '-f', '$/regions-twice.yaml'], '-f'],
  [['fleet', 'apply', '-f', '$/types-twice.yaml'], '-f'],
  // TEMPORAL_CLI_PATH that is no working CLI, where the embedded default would start
  cliPath(['start', '--name', 'g', '--detach'], '$/no-such-file'),
  cliPath(['start', '--name', 'g', '--detach'], '$/a-directory'),
  cliPath(['start', '--name', 'g', '--detach'], '$/not-executable'),
  cliPath(['start', '--name', 'g', '--detach'], '$/fails'),
  cliPath(['start', '--name', 'g', '--detach'], '$/other-tool'),
  cliPath(['offers'], '$/silent'),
  cliPath(['server', 'start'], '$/no-such-file'),
  cliPath(['server', 'start'], '$/fails'),
  cliPath(['server', 'start', '--no-worker'], '$/other-tool'),
];

const fill = (s: string): string => s.replace(/^\$(?=\/|$)/, dir).replace(/^CLOSED$/, String(closedPort));
const argvOf = (c: Case): string[] => c[0].map(fill);
const envOf = (c: Case): Record<string, string> => Object.fromEntries(Object.entries(c[2] ?? {}).map(([k, v]) => [k, fill(v)]));
const title = (c: Case): string =>
  `${c[0].map((a) => JSON.stringify(a)).join(' ')}${c[2]?.TEMPORAL_CLI_PATH ? ` with TEMPORAL_CLI_PATH=${c[2].TEMPORAL_CLI_PATH}` : ''}`;

describe('the decisions', () => {
  it.each(['H100', 'h100', 'H100-SXM', 'A100-80GB', 'a100-80gb', 'RTX4090', 'L40S', 'L4', 'T4', 'A10G', 'MI300X', 'B200', 'SIM', 'RTXA6000', 'A6000', 'GB200'])(
    '%s is a known model',
    (m) => {
      expect(gpuModelProblem(m)).toBeUndefined();
    },
  );

  it('every listed model is known as it is written', () => {
    for (const m of KNOWN_GPU_MODELS) expect(isKnownGpuModel(m.replace(/\s+/g, '')), m).toBe(true);
  });

  it.each<[string, string]>([
    ['H10', 'did you mean --gpu H100?'],
    ['A1OO', 'did you mean --gpu A100?'],
    ['L40SS', 'did you mean --gpu L40S?'],
    ['H100-FOO', 'did you mean --gpu H100?'],
    ['FOO', 'use one of the known models: '],
    ['SXM', 'e.g. --gpu H100'],
  ])('%s: %s', (m, fix) => {
    expect(gpuModelProblem(m)?.fix).toContain(fix);
  });

  it.each<[string, { model: string; count: number } | undefined]>([
    ['H100x8', { model: 'H100', count: 8 }],
    ['8xH100', { model: 'H100', count: 8 }],
    ['h100 * 2', { model: 'H100', count: 2 }],
    ['MI300Xx8', { model: 'MI300X', count: 8 }],
    ['MI300X', undefined],
    ['H100', undefined],
    ['H100:8', undefined],
    ['A100-80GB', undefined],
    ['FOOx8', undefined],
  ])('countAsMultiplier(%s)', (text, want) => {
    expect(countAsMultiplier(text)).toEqual(want);
  });

  it('--gpu H100x8 says how to write it', () => {
    expect(() => parseGpu('H100x8')).toThrow(InputError);
    expect(() => parseGpu('H100x8')).toThrow(/multiplier/);
    try {
      parseGpu('8xa100');
    } catch (err) {
      expect((err as InputError).suggestion).toContain('--gpu A100:8');
    }
  });

  it.each<[string, string[] | RegExp]>([
    ['aws', ['aws']],
    ['aws, gcp', ['aws', 'gcp']],
    ['aws,aws', /"aws" twice/],
    ['a,,b', /empty item/],
    ['', /empty item/],
  ])('listValue(%j)', (text, want) => {
    if (Array.isArray(want)) expect(listValue('--cloud', text)).toEqual(want);
    else expect(() => listValue('--cloud', text)).toThrow(want);
  });

  it.each<[Parameters<typeof cliPathProblem>[1], RegExp | undefined]>([
    [{ kind: 'missing' }, /no such file/],
    [{ kind: 'directory' }, /is a directory/],
    [{ kind: 'not-executable' }, /is not executable/],
    [{ kind: 'ran', code: 1, version: 'boom' }, /exited 1: "boom"/],
    [{ kind: 'ran', code: null }, /exited abnormally/],
    [{ kind: 'ran', code: 0, version: 'docker version 27' }, /does not name temporal/],
    [{ kind: 'ran', code: 0, version: '' }, /does not name temporal/],
    [{ kind: 'ran', code: 0, version: 'temporal version 1.5.1 (Server 1.29.1, UI 2.41.0)' }, undefined],
  ])('cliPathProblem(%j)', (probe, want) => {
    const p = cliPathProblem('/x/temporal', probe);
    if (want) expect(p).toMatch(want);
    else expect(p).toBeUndefined();
  });
});

describe('bad input at the edge → exit 2, the field named, nothing started', () => {
  it(`covers about 100 bad inputs (${CASES.length})`, () => {
    expect(CASES.length).toBeGreaterThanOrEqual(100);
  });

  it.each(CASES.map((c) => [title(c), c] as const))('%s', async (_t, c) => {
    const o = world(envOf(c));
    const code = await runCli(argvOf(c), o);
    expect(code, o.errText + o.outText).toBe(2);
    expect(o.errText).toContain(`error: ${c[1]}: `);
    expect(o.errText).toMatch(/\n {2}fix: \S/);
    expect(o.outText).toBe('');
    nothingStarted(o);
  });

  it.each(CASES.map((c) => [title(c), c] as const))('%s (--json)', async (_t, c) => {
    const o = world(envOf(c));
    const code = await runCli([...argvOf(c), '--json'], o);
    expect(code, o.errText + o.outText).toBe(2);
    const lines = o.outText.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ ok: false, error: { kind: 'InvalidInput', field: c[1], fix: expect.any(String) } });
    nothingStarted(o);
  });
});

describe('through the real bin (bin/provision.js)', () => {
  const run = promisify(execFile);
  const provision = async (args: string[], env: Record<string, string> = {}): Promise<{ code: number; err: string }> => {
    const o = world(env);
    const r = await run(process.execPath, [join(ROOT, 'bin', 'provision.js'), ...args], { env: o.env, cwd: ROOT, timeout: 120_000 }).then(
      (x) => ({ code: 0, err: x.stderr }),
      (e: { code?: number; stderr?: string }) => ({ code: e.code ?? -1, err: e.stderr ?? '' }),
    );
    expect(existsSync(join(o.env.GPUPROV_STATE_DIR ?? '', 'run')), 'the embedded default was started').toBe(false);
    return r;
  };

  it('start --gpu H100x8: exit 2, write H100:8', async () => {
    const r = await provision(['start', '--name', 'g', '--gpu', 'H100x8']);
    expect(r.code, r.err).toBe(2);
    expect(r.err).toContain('error: --gpu: "H100x8" writes the GPU count as a multiplier');
    expect(r.err).toContain('--gpu H100:8');
  });

  it('offers --gpu A1OO: exit 2, did you mean A100', async () => {
    const r = await provision(['offers', '--gpu', 'A1OO']);
    expect(r.code, r.err).toBe(2);
    expect(r.err).toContain('did you mean --gpu A100?');
  });

  it('start --cloud aws,aws and an empty --ssh-key: exit 2', async () => {
    const twice = await provision(['start', '--name', 'g', '--cloud', 'aws,aws']);
    expect(twice.code, twice.err).toBe(2);
    expect(twice.err).toContain('error: --cloud: "aws,aws" names "aws" twice');
    const empty = await provision(['start', '--name', 'g', '--ssh-key', '']);
    expect(empty.code, empty.err).toBe(2);
    expect(empty.err).toContain('error: --ssh-key: --ssh-key is empty');
  });

  it('server start with a TEMPORAL_CLI_PATH that is no CLI: exit 2 naming the variable', async () => {
    const r = await provision(['server', 'start'], {
      TEMPORAL_CLI_PATH: join(dir, 'other-tool'),
      TEMPORAL_ADDRESS: '',
      GPUPROV_EMBEDDED_PORT: String(closedPort),
    });
    expect(r.code, r.err).toBe(2);
    expect(r.err).toContain(`error: TEMPORAL_CLI_PATH: TEMPORAL_CLI_PATH=${join(dir, 'other-tool')} is not a working temporal CLI`);
    expect(r.err).toContain('fix: point TEMPORAL_CLI_PATH at the temporal binary');
  });

  afterAll(() => expect(listener.connections(), 'a server was contacted').toBe(0));
});
