/**
 * Bad input, table-driven: every case exits 2, names the field and the fix, and starts or
 * contacts nothing. A TCP listener stands in for every server the CLI could reach
 * (TEMPORAL_ADDRESS and the embedded default's port point at it) and counts connections;
 * TEMPORAL_CLI_PATH is a script that leaves a marker if anything tries to start a server.
 * Each case runs twice: as text, and with --json (then stdout is exactly one JSON object).
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCountingListener, type CountingListener } from '../../harness/counting-listener';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/client/cli';
import { recordingIo, type RecordingIo } from '../../harness/recording-io';
import { generateEd25519 } from '../../../src/ssh/keygen';

let dir: string;
let listener: CountingListener;
let port: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gpuprov-badinput-'));
  listener = await startCountingListener();
  port = listener.port;
  const marker = join(dir, 'temporal-cli-ran');
  writeFileSync(join(dir, 'fake-temporal'), `#!/bin/sh\ntouch ${marker}\nexit 1\n`);
  chmodSync(join(dir, 'fake-temporal'), 0o755);
  // Fleet shape files and keys the cases refer to by name.
  const shape = (vm: unknown): string => JSON.stringify({ name: 'f', generation: 1, groups: [{ id: 'a', role: 'w', count: 1, vm }] });
  const files: Record<string, string | Buffer> = {
    'binary.yaml': Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 0xff, 0xfe]),
    'malformed.yaml': 'name: [f\ngeneration: 1\n',
    'not-a-shape.yaml': '- just\n- a list\n',
    'region.yaml': shape({ regions: ['US East'] }),
    'unknown-region.yaml': shape({ clouds: ['aws'], regions: ['us-east-9'] }),
    'type.yaml': shape({ instanceTypes: ['g5 xlarge'] }),
    'price0.yaml': shape({ maxPricePerHour: 0 }),
    'price1e9.yaml': shape({ maxPricePerHour: 1e9 }),
    'ttl0.yaml': shape({ ttlMs: 0 }),
    'ttl1.yaml': shape({ ttlMs: 1 }),
    'k3s-local.yaml': shape({ clouds: ['local'], k8s: 'on' }),
    'garbage-key.yaml': shape({ publicKeys: ['ssh-ed25519 not-base64!'] }),
    'private-key.yaml': shape({ publicKeys: ['-----BEGIN OPENSSH PRIVATE KEY-----'] }),
    'unknown-cloud.yaml': shape({ clouds: ['azure'] }),
    'gpu17.yaml': shape({ gpu: { model: 'H100', count: 17 } }),
    'unknown-field.yaml': shape({ ram: 64 }),
    'image-local.yaml': shape({ clouds: ['local'], image: 'ubuntu' }),
    'spot-local.yaml': shape({ clouds: ['local'], spot: 'only' }),
    'spot-always.yaml': shape({ spot: 'always' }),
    'disk-lambda.yaml': shape({ clouds: ['lambda'], diskGb: 100 }),
    'garbage.pub': 'ssh-ed25519 AAAAthisisnotakey\n',
    garbage: 'not a key\n',
    'state-file': 'a file where a directory should be\n',
    'broken.toml': '[profile.default\naddress = "x:1"\n',
  };
  for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, f), text);
  const good = generateEd25519('test');
  writeFileSync(join(dir, 'good'), good.private, { mode: 0o600 });
  writeFileSync(join(dir, 'good.pub'), good.public);
});
afterAll(() => listener?.close());

function io(extraEnv: Record<string, string> = {}): RecordingIo {
  const home = mkdtempSync(join(dir, 'home-'));
  mkdirSync(join(home, '.ssh'));
  const o = recordingIo({
    HOME: home,
    PATH: process.env.PATH,
    TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
    GPUPROV_EMBEDDED_PORT: String(port),
    GPUPROV_STATE_DIR: join(home, 'state'),
    TEMPORAL_CLI_PATH: join(dir, 'fake-temporal'),
    ...extraEnv,
  });
  for (const [k, v] of Object.entries(extraEnv)) if (v === '') delete o.env[k];
  return o;
}

/** [what, argv ($ = the fixtures dir), the field the error must name, extra env ('' unsets)]. */
type Case = [string, string[], string, Record<string, string>?];

const CASES: Case[] = [
  // start: the VM's name
  ['no name', ['start'], '--name'],
  ['empty name', ['start', '--name', ''], '--name'],
  ['uppercase name', ['start', '--name', 'GPU1'], '--name'],
  ['underscore name', ['start', '--name', 'gpu_1'], '--name'],
  ['name starting with a digit', ['start', '--name', '1gpu'], '--name'],
  ['name ending with a hyphen', ['start', '--name', 'gpu-'], '--name'],
  ['name too long', ['start', '--name', 'a'.repeat(33)], '--name'],
  ['name with a dot', ['start', '--name', 'gpu.1'], '--name'],
  ['name with a space', ['start', '--name', 'gpu 1'], '--name'],
  ['name with a zero-width space', ['start', '--name', 'gpu\u200b1'], '--name'],
  ['name with a bell', ['start', '--name', 'gpu\u0007'], '--name'],
  ['bad name as the argument', ['start', 'GPU'], 'NAME'],
  // start: VM fields
  ['gpu without model', ['start', '--name', 'g', '--gpu', ':1'], '--gpu'],
  ['gpu count zero', ['start', '--name', 'g', '--gpu', 'H100:0'], '--gpu'],
  ['gpu count too big', ['start', '--name', 'g', '--gpu', 'H100:64'], '--gpu'],
  ['gpu count not a number', ['start', '--name', 'g', '--gpu', 'H100:x'], '--gpu'],
  ['gpu with spaces inside', ['start', '--name', 'g', '--gpu', 'H 100'], '--gpu'],
  ['gpu negative count', ['start', '--name', 'g', '--gpu', 'H100:-1'], '--gpu'],
  ['price not a number', ['start', '--name', 'g', '--max-price', 'cheap'], '--max-price'],
  ['price zero', ['start', '--name', 'g', '--max-price', '0'], '--max-price'],
  ['price below a cent', ['start', '--name', 'g', '--max-price', '0.001'], '--max-price'],
  ['price negative', ['start', '--name', 'g', '--max-price', '-3'], '--max-price'],
  ['price infinite', ['start', '--name', 'g', '--max-price', 'Infinity'], '--max-price'],
  ['price absurd', ['start', '--name', 'g', '--max-price', '50000'], '--max-price'],
  ['price 1e9', ['start', '--name', 'g', '--max-price', '1e9'], '--max-price'],
  ['price NaN', ['start', '--name', 'g', '--max-price', 'NaN'], '--max-price'],
  ['ttl without unit', ['start', '--name', 'g', '--ttl', '8'], '--ttl'],
  ['ttl unknown unit', ['start', '--name', 'g', '--ttl', '8y'], '--ttl'],
  ['ttl of 1 ms', ['start', '--name', 'g', '--ttl', '1ms'], '--ttl'],
  ['ttl zero', ['start', '--name', 'g', '--ttl', '0m'], '--ttl'],
  ['ttl too short', ['start', '--name', 'g', '--ttl', '30s'], '--ttl'],
  ['ttl too long', ['start', '--name', 'g', '--ttl', '31d'], '--ttl'],
  ['ttl negative', ['start', '--name', 'g', '--ttl', '-1h'], '--ttl'],
  ['unknown cloud', ['start', '--name', 'g', '--cloud', 'azure'], '--cloud'],
  ['misspelled cloud', ['start', '--name', 'g', '--cloud', 'lambda,runpood'], '--cloud'],
  ['empty cloud item', ['start', '--name', 'g', '--cloud', 'aws,,gcp'], '--cloud'],
  ['unknown local region', ['start', '--name', 'g', '--cloud', 'local', '--region', 'local-z'], '--region'],
  ['unknown aws region', ['start', '--name', 'g', '--cloud', 'aws', '--region', 'us-east-9'], '--region'],
  ['malformed region', ['start', '--name', 'g', '--region', 'US East'], '--region'],
  ['malformed instance type', ['start', '--name', 'g', '--instance-type', 'g5 xlarge'], '--instance-type'],
  ['--k8s on the local cloud', ['start', '--name', 'g', '--cloud', 'local', '--k8s'], '--k8s'],
  ['--k8s on runpod and vastai', ['start', '--name', 'g', '--cloud', 'runpod,vastai', '--k8s'], '--k8s'],
  ['--image on the local cloud', ['start', '--name', 'g', '--cloud', 'local', '--image', 'x'], '--image'],
  ['--disk-gb on the local cloud', ['start', '--name', 'g', '--cloud', 'local', '--disk-gb', '50'], '--disk-gb'],
  ['--image that is not an AMI on aws', ['start', '--name', 'g', '--cloud', 'aws', '--image', 'ubuntu-22.04'], '--image'],
  ['--disk-gb on lambda and digitalocean', ['start', '--name', 'g', '--cloud', 'lambda,digitalocean', '--disk-gb', '100'], '--disk-gb'],
  ['--disk-gb beyond aws', ['start', '--name', 'g', '--cloud', 'aws', '--disk-gb', '20000'], '--disk-gb'],
  ['--disk-gb not a number', ['start', '--name', 'g', '--disk-gb', 'big'], '--disk-gb'],
  ['--disk-gb with a fraction', ['start', '--name', 'g', '--disk-gb', '50.5'], '--disk-gb'],
  ['--disk-gb too small', ['start', '--name', 'g', '--disk-gb', '1'], '--disk-gb'],
  ['--image empty', ['start', '--name', 'g', '--image', ''], '--image'],
  ['--spot on the local cloud', ['start', '--name', 'g', '--cloud', 'local', '--spot'], '--spot'],
  ['--spot only on local and docker', ['start', '--name', 'g', '--cloud', 'local,docker', '--spot', 'only'], '--spot'],
  ['--spot with an unknown mode', ['start', '--name', 'g', '--spot=always'], '--spot'],
  ['--spot with a misspelt mode', ['start', '--name', 'g', '--spot', 'atuo'], '--spot'],
  ['--spot with a stray word', ['start', '--name', 'g', '--spot', 'always'], '--spot'],
  ['--spot given twice', ['start', '--name', 'g', '--spot', '--spot', 'auto'], '--spot'],
  ['--recover and --no-recover', ['start', '--name', 'g', '--recover', '--no-recover'], '--recover'],
  ['offers --spot on the local cloud', ['offers', '--cloud', 'local', '--spot'], '--spot'],
  ['--capacity-block without --yes', ['start', '--name', 'g', '--capacity-block', 'cbo-1', '--duration', '24h'], '--yes'],
  ['--capacity-block without --duration', ['start', '--name', 'g', '--capacity-block', 'cbo-1', '--yes'], '--duration'],
  ['--duration not whole hours', ['start', '--name', 'g', '--capacity-block', 'cbo-1', '--yes', '--duration', '90m'], '--duration'],
  ['--count out of range', ['start', '--name', 'g', '--capacity-block', 'cbo-1', '--yes', '--duration', '24h', '--count', '0'], '--count'],
  ['--start-after not a date', ['start', '--name', 'g', '--capacity-block', 'cbo-1', '--yes', '--duration', '24h', '--start-after', 'monday'], '--start-after'],
  ['--duration without --capacity-block', ['start', '--name', 'g', '--duration', '24h'], '--duration'],
  ['--yes without --capacity-block', ['start', '--name', 'g', '--yes'], '--yes'],
  ['--wait without --queue', ['start', '--name', 'g', '--wait', '1h'], '--wait'],
  ['--wait beyond 7 days', ['start', '--name', 'g', '--queue', '--wait', '8d'], '--wait'],
  ['--reservation and --queue', ['start', '--name', 'g', '--reservation', 'cr-1', '--queue'], '--queue'],
  ['--reservation with --spot', ['start', '--name', 'g', '--reservation', 'cr-1', '--spot'], '--spot'],
  ['--queue with --parallel', ['start', '--name', 'g', '--queue', '--parallel', '3'], '--parallel'],
  ['offers --capacity-block without --duration', ['offers', '--capacity-block'], '--duration'],
  ['offers --reserved with --capacity-block', ['offers', '--reserved', '--capacity-block', '--duration', '24h'], '--capacity-block'],
  ['offers --count without --capacity-block', ['offers', '--count', '2'], '--count'],
  ['--image with a bell', ['start', '--name', 'g', '--image', 'a\u0007b'], '--image'],
  ['--ssh-key without its .pub', ['start', '--name', 'g', '--ssh-key', '$/garbage.pub.missing'], '--ssh-key'],
  ['--ssh-key whose .pub is garbage', ['start', '--name', 'g', '--ssh-key', '$/garbage'], '--ssh-key'],
  // start: the command line itself
  ['unknown flag', ['start', '--name', 'g', '--gpus', 'H100'], '--gpus'],
  ['flag missing its value', ['start', '--name', 'g', '--gpu'], '--gpu'],
  ['flag followed by a flag', ['start', '--name', '--gpu', 'H100'], '--name'],
  ['boolean flag with a value', ['start', '--name', 'g', '--detach=yes'], '--detach'],
  ['extra positional', ['start', 'g', 'h'], 'arguments'],
  ['--name given twice', ['start', '--name', 'a', '--name', 'b'], '--name'],
  ['--gpu given twice', ['start', '--name', 'g', '--gpu', 'H100', '--gpu', 'A100'], '--gpu'],
  ['--k8s and --no-k8s', ['start', '--name', 'g', '--k8s', '--no-k8s'], '--k8s'],
  ['--detach twice', ['start', '--name', 'g', '--detach', '--detach'], '--detach'],
  ['a stray word after --name', ['start', '--name', 'a', 'b'], '--name'],
  ['a TTL with a space', ['start', '--name', 'g', '--ttl', '1h', '30m'], '--ttl'],
  ['a TTL with a space, no name', ['start', '--ttl', '1h', '30m'], '--ttl'],
  ['-name with one dash', ['start', '-name', 'a'], '-name'],
  ['-gpu with one dash', ['start', '--name', 'g', '-gpu', 'H100'], '-gpu'],
  ['NAME and --name both', ['start', 'a', '--name', 'b'], 'arguments'],
  ['an option before the command', ['--name', 'g'], 'command'],
  ['unknown command', ['lsit'], 'command'],
  // other commands: names checked before the server is contacted
  ['status without name', ['status'], 'NAME'],
  ['status bad name', ['status', 'Bad'], 'NAME'],
  ['status name with a tab', ['status', 'gpu\t1'], 'NAME'],
  ['status two names', ['status', 'a', 'b'], 'arguments'],
  ['budget not a number', ['start', '--name', 'g', '--budget', 'lots'], '--budget'],
  ['budget of zero', ['start', '--name', 'g', '--budget', '0'], '--budget'],
  ['parallel not a number', ['start', '--name', 'g', '--parallel', 'many'], '--parallel'],
  ['parallel of zero', ['start', '--name', 'g', '--parallel', '0'], '--parallel'],
  ['parallel above 8', ['start', '--name', 'g', '--parallel', '9'], '--parallel'],
  ['recover with a value', ['start', '--name', 'g', '--recover=5'], '--recover'],
  ['recover twice', ['start', '--name', 'g', '--recover', '--recover'], '--recover'],
  ['explain without name', ['explain'], 'NAME'],
  ['explain bad name', ['explain', 'Bad_Name'], 'NAME'],
  ['down without name', ['down'], 'NAME'],
  ['down bad name', ['down', 'gpu_1'], 'NAME'],
  ['down --detach twice', ['down', 'g', '--detach', '--detach'], '--detach'],
  ['cancel bad name', ['cancel', 'x_y'], 'NAME'],
  ['offers with unknown cloud', ['offers', '--cloud', 'ibm'], '--cloud'],
  ['offers with bad gpu', ['offers', '--gpu', 'A100:99'], '--gpu'],
  ['offers with price 0', ['offers', '--max-price', '0'], '--max-price'],
  ['offers with a name', ['offers', 'g'], 'arguments'],
  ['list with unknown flag', ['list', '--everything'], '--everything'],
  ['list --all twice', ['list', '--all', '--all'], '--all'],
  ['kubeconfig without name', ['kubeconfig'], 'NAME'],
  ['kubeconfig bad name', ['kubeconfig', 'GPU1'], 'NAME'],
  ['kubeconfig name with an escape', ['kubeconfig', 'gpu\u001b[31m'], 'NAME'],
  ['kubeconfig port not a number', ['kubeconfig', 'g', '--port', 'http'], '--port'],
  ['kubeconfig port out of range', ['kubeconfig', 'g', '--port', '70000'], '--port'],
  ['kubeconfig port in exponent form', ['kubeconfig', 'g', '--port', '1e3'], '--port'],
  ['kubeconfig --out without a value', ['kubeconfig', 'g', '--out'], '--out'],
  ['kubeconfig unknown flag', ['kubeconfig', 'g', '--context', 'x'], '--context'],
  ['kubeconfig missing identity file', ['kubeconfig', 'g', '--identity', '$/no-such-key'], '--identity'],
  ['tunnel without name', ['tunnel'], 'NAME'],
  ['tunnel bad name', ['tunnel', 'a.b'], 'NAME'],
  ['tunnel port zero', ['tunnel', 'g', '--port', '0'], '--port'],
  ['tunnel --identity without a value', ['tunnel', 'g', '--identity'], '--identity'],
  ['tunnel extra positional', ['tunnel', 'g', 'h'], 'arguments'],
  ['logs without node', ['logs'], 'NODE'],
  ['logs bad node', ['logs', 'train'], 'NODE'],
  ['logs bad line count', ['logs', 'train-work-0', '-n', 'many'], '--lines'],
  ['logs bad --fleet', ['logs', 'train-work-0', '--fleet', 'Bad'], '--fleet'],
  ['ssh bad name', ['ssh', 'GPU'], 'NAME'],
  ['ssh command without --', ['ssh', 'g', 'hostname'], 'arguments'],
  // fleet: names and the shape file, read and checked before anything is contacted
  ['fleet without subcommand', ['fleet'], 'fleet'],
  ['fleet unknown subcommand', ['fleet', 'statsu'], 'fleet'],
  ['fleet status without name', ['fleet', 'status'], 'FLEET'],
  ['fleet status bad name', ['fleet', 'status', 'Bad_Name'], 'FLEET'],
  ['fleet down name too long', ['fleet', 'down', 'a'.repeat(20)], 'FLEET'],
  ['fleet down name with a newline', ['fleet', 'down', 'f\nx'], 'FLEET'],
  ['fleet apply without -f', ['fleet', 'apply'], '-f'],
  ['fleet apply -f twice', ['fleet', 'apply', '-f', '$/ttl0.yaml', '-f', '$/ttl1.yaml'], '--file'],
  ['fleet apply missing file', ['fleet', 'apply', '-f', '$/missing.yaml'], '-f'],
  ['fleet apply directory', ['fleet', 'apply', '-f', '$'], '-f'],
  ['fleet apply binary file', ['fleet', 'apply', '-f', '$/binary.yaml'], '-f'],
  ['fleet apply malformed YAML', ['fleet', 'apply', '-f', '$/malformed.yaml'], '-f'],
  ['fleet apply a list, not a shape', ['fleet', 'apply', '-f', '$/not-a-shape.yaml'], '-f'],
  ['fleet vm: malformed region', ['fleet', 'apply', '-f', '$/region.yaml'], '-f'],
  ['fleet vm: unknown region', ['fleet', 'apply', '-f', '$/unknown-region.yaml'], '-f'],
  ['fleet vm: bad instance type', ['fleet', 'apply', '-f', '$/type.yaml'], '-f'],
  ['fleet vm: price 0', ['fleet', 'apply', '-f', '$/price0.yaml'], '-f'],
  ['fleet vm: price 1e9', ['fleet', 'apply', '-f', '$/price1e9.yaml'], '-f'],
  ['fleet vm: TTL 0', ['fleet', 'apply', '-f', '$/ttl0.yaml'], '-f'],
  ['fleet vm: TTL 1 ms', ['fleet', 'apply', '-f', '$/ttl1.yaml'], '-f'],
  ['fleet vm: k3s on the local cloud', ['fleet', 'apply', '-f', '$/k3s-local.yaml'], '-f'],
  ['fleet vm: garbage public key', ['fleet', 'apply', '-f', '$/garbage-key.yaml'], '-f'],
  ['fleet vm: a private key', ['fleet', 'apply', '-f', '$/private-key.yaml'], '-f'],
  ['fleet vm: unknown cloud', ['fleet', 'apply', '-f', '$/unknown-cloud.yaml'], '-f'],
  ['fleet vm: 17 GPUs', ['fleet', 'apply', '-f', '$/gpu17.yaml'], '-f'],
  ['fleet vm: an image on the local cloud', ['fleet', 'apply', '-f', '$/image-local.yaml'], '-f'],
  ['fleet vm: spot only on the local cloud', ['fleet', 'apply', '-f', '$/spot-local.yaml'], '-f'],
  ['fleet vm: an unknown spot mode', ['fleet', 'apply', '-f', '$/spot-always.yaml'], '-f'],
  ['fleet vm: a disk size on lambda', ['fleet', 'apply', '-f', '$/disk-lambda.yaml'], '-f'],
  ['fleet vm: unknown field', ['fleet', 'apply', '-f', '$/unknown-field.yaml'], '-f'],
  ['server unknown subcommand', ['server', 'restart'], 'server'],
  ['server start unknown flag', ['server', 'start', '--fast'], '--fast'],
  ['server start --worker --no-worker', ['server', 'start', '--worker', '--no-worker'], '--worker'],
  // configuration: exit 2 naming the variable or file
  ['GPUPROV_EMBEDDED_PORT=abc', ['list'], 'GPUPROV_EMBEDDED_PORT', { GPUPROV_EMBEDDED_PORT: 'abc', TEMPORAL_ADDRESS: '' }],
  ['GPUPROV_EMBEDDED_PORT=abc (server start)', ['server', 'start'], 'GPUPROV_EMBEDDED_PORT', { GPUPROV_EMBEDDED_PORT: 'abc', TEMPORAL_ADDRESS: '' }],
  ['GPUPROV_EMBEDDED_UI_PORT=99999', ['server', 'status'], 'GPUPROV_EMBEDDED_UI_PORT', { GPUPROV_EMBEDDED_UI_PORT: '99999' }],
  ['TEMPORAL_ADDRESS with a scheme', ['status', 'g'], 'TEMPORAL_ADDRESS', { TEMPORAL_ADDRESS: 'http://localhost:7233' }],
  ['TEMPORAL_ADDRESS without a port', ['list'], 'TEMPORAL_ADDRESS', { TEMPORAL_ADDRESS: 'localhost' }],
  ['TEMPORAL_ADDRESS with a bad port', ['start', '--name', 'g'], 'TEMPORAL_ADDRESS', { TEMPORAL_ADDRESS: 'localhost:99999' }],
  ['a broken temporal.toml', ['list'], '$/broken.toml', { TEMPORAL_CONFIG_FILE: '$/broken.toml', TEMPORAL_ADDRESS: '' }],
  ['TEMPORAL_PROFILE not in the file', ['list'], 'TEMPORAL_PROFILE', { TEMPORAL_PROFILE: 'nope', TEMPORAL_CONFIG_FILE: '$/missing.toml' }],
  ['a TLS file that is missing', ['fleet', 'status', 'f'], 'TEMPORAL_TLS_*', { TEMPORAL_TLS_CLIENT_CERT_PATH: '$/no-such-cert.pem' }],
  ['a state dir that is a file', ['start', '--name', 'g'], 'GPUPROV_STATE_DIR', { GPUPROV_STATE_DIR: '$/state-file' }],
  ['a state dir under a file', ['server', 'start'], 'GPUPROV_STATE_DIR', { GPUPROV_STATE_DIR: '$/state-file/x', TEMPORAL_ADDRESS: '' }],
  ['a config dir that is a file', ['kubeconfig', 'g'], 'GPUPROV_CONFIG_DIR', { GPUPROV_CONFIG_DIR: '$/state-file' }],
];

const fill = (s: string): string => s.replace(/^\$(?=\/|$)/, dir);
const argvOf = (c: Case): string[] => c[1].map(fill);
const envOf = (c: Case): Record<string, string> => Object.fromEntries(Object.entries(c[3] ?? {}).map(([k, v]) => [k, fill(v)]));

function nothingStarted(o: ReturnType<typeof io>): void {
  expect(listener.connections(), 'a server was contacted').toBe(0);
  expect(existsSync(join(dir, 'temporal-cli-ran')), 'a Temporal server was started').toBe(false);
  expect(existsSync(join(o.env.GPUPROV_STATE_DIR ?? '', 'run')), 'the embedded default was touched').toBe(false);
}

describe('bad input → exit 2, the field named, nothing started or contacted', () => {
  it(`has at least 120 cases (${CASES.length})`, () => {
    expect(CASES.length).toBeGreaterThanOrEqual(120);
  });

  it.each(CASES)('%s', async (...c) => {
    const o = io(envOf(c));
    const code = await runCli(argvOf(c), o);
    expect(code, o.errText + o.outText).toBe(2);
    expect(o.errText).toContain(`error: ${fill(c[2])}: `);
    expect(o.errText).toMatch(/\n {2}fix: \S/);
    expect(o.outText).toBe('');
    nothingStarted(o);
  });

  it.each(CASES)('%s (--json: one JSON object)', async (...c) => {
    const o = io(envOf(c));
    const code = await runCli([...argvOf(c), '--json'], o);
    expect(code, o.errText + o.outText).toBe(2);
    const lines = o.outText.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      ok: false,
      error: { kind: 'InvalidInput', field: fill(c[2]), message: expect.any(String), fix: expect.any(String) },
    });
    nothingStarted(o);
  });
});

describe('what the messages say', () => {
  const run = async (argv: string[], env: Record<string, string> = {}): Promise<string> => {
    const o = io(env);
    expect(await runCli(argv, o)).toBe(2);
    return o.errText;
  };

  it('an unknown command or flag suggests the nearest one', async () => {
    expect(await run(['lsit'])).toContain('did you mean "provision list"');
    expect(await run(['start', '--name', 'g', '--retry-until'])).toContain('did you mean --retry-until-up?');
    expect(await run(['kubeconfig', 'g', '--ports', '1'])).toContain('did you mean --port?');
    expect(await run(['fleet', 'aply'])).toContain('did you mean "provision fleet apply"');
  });

  it('-name gets "did you mean --name"', async () => {
    expect(await run(['start', '-name', 'a'])).toContain('did you mean --name?');
  });

  it('a stray word after a value says a flag takes one value, with the example', async () => {
    const err = await run(['start', '--name', 'g', '--ttl', '1h', '30m']);
    expect(err).toContain('unexpected argument "30m" after --ttl "1h"');
    expect(err).toContain('--ttl 1h30m');
  });

  it('shows a name with invisible or control characters escaped, JSON-style', async () => {
    expect(await run(['start', '--name', 'gpu\u200b1'])).toContain('"gpu\\u200b1"');
    expect(await run(['status', 'gpu\u0007'])).toContain('"gpu\\u0007"');
    expect(await run(['kubeconfig', 'gpu\u001b[31m'])).toContain('"gpu\\u001b[31m"');
  });

  it('contradictions and repeats name both forms', async () => {
    expect(await run(['start', '--name', 'g', '--k8s', '--no-k8s'])).toContain('--k8s and --no-k8s contradict each other');
    expect(await run(['start', '--name', 'a', '--name', 'b'])).toContain('--name is given twice');
  });

  it('start flags and a fleet vm: are refused by the same schema, with the same words', async () => {
    const pairs: [string[], string][] = [
      [['--max-price', '0'], 'price0.yaml'],
      [['--max-price', '1e9'], 'price1e9.yaml'],
      [['--ttl', '0m'], 'ttl0.yaml'],
      [['--region', 'US East'], 'region.yaml'],
      [['--cloud', 'aws', '--region', 'us-east-9'], 'unknown-region.yaml'],
      [['--instance-type', 'g5 xlarge'], 'type.yaml'],
      [['--cloud', 'local', '--k8s'], 'k3s-local.yaml'],
      [['--cloud', 'azure'], 'unknown-cloud.yaml'],
    ];
    for (const [flags, file] of pairs) {
      const start = (await run(['start', '--name', 'g', ...flags])).split('\n')[0]!.replace(/^error: [^:]+: /, '');
      const fleet = await run(['fleet', 'apply', '-f', join(dir, file)]);
      expect(fleet, `${flags.join(' ')} vs ${file}`).toContain(start);
    }
  });

  it('--image/--disk-gb that no named cloud can honour name the cloud, the flag and the clouds that can', async () => {
    const local = await run(['start', '--name', 'g', '--cloud', 'local', '--image', 'x']);
    expect(local).toContain('error: --image: local cannot use --image');
    expect(local).toMatch(/fix: leave --image out, or choose a cloud that takes one: aws, gcp/);
    expect(await run(['start', '--name', 'g', '--cloud', 'local', '--disk-gb', '50'])).toContain('error: --disk-gb: local cannot use --disk-gb');
    const both = await run(['start', '--name', 'g', '--cloud', 'lambda,digitalocean', '--disk-gb', '100']);
    expect(both).toContain('lambda cannot use --disk-gb');
    expect(both).toContain('digitalocean cannot use --disk-gb');
    const ami = await run(['start', '--name', 'g', '--cloud', 'aws', '--image', 'ubuntu-22.04']);
    expect(ami).toContain('--image "ubuntu-22.04" is not an AMI id');
    expect(ami).toContain('fix: e.g. --image ami-0abcdef1234567890');
    expect(await run(['start', '--name', 'g', '--cloud', 'aws', '--disk-gb', '20000'])).toContain('fix: use 8 to 16384 GB on aws');
    expect(await run(['fleet', 'apply', '-f', `${dir}/image-local.yaml`])).toMatch(/image: local cannot use --image .*\(leave --image out/);
    expect(await run(['start', 'g', '--cloud', 'local', '--spot'])).toMatch(/error: --spot: local sells no spot \(on-demand only\)\n {2}fix: use --spot auto/);
    expect(await run(['fleet', 'apply', '-f', `${dir}/spot-local.yaml`])).toMatch(/spot: local sells no spot \(on-demand only\) \(use --spot auto/);
  });

  it('a garbage public key is refused for start (--ssh-key) and for a fleet', async () => {
    expect(await run(['start', '--name', 'g', '--ssh-key', join(dir, 'garbage')])).toMatch(/garbage\.pub is not a valid ssh-ed25519 key/);
    expect(await run(['fleet', 'apply', '-f', join(dir, 'garbage-key.yaml')])).toContain('groups.0.vm.publicKeys.0: public key has no base64 key');
  });

  it('bad configuration names the variable or file and how to fix it', async () => {
    expect(await run(['list'], { GPUPROV_EMBEDDED_PORT: 'abc', TEMPORAL_ADDRESS: '' })).toContain('GPUPROV_EMBEDDED_PORT=abc is not a TCP port');
    expect(await run(['list'], { TEMPORAL_ADDRESS: 'http://x:7233' })).toContain('write host:port without a scheme');
    const toml = await run(['list'], { TEMPORAL_CONFIG_FILE: join(dir, 'broken.toml'), TEMPORAL_ADDRESS: '' });
    expect(toml).toContain('the Temporal config file cannot be used: Invalid TOML');
    expect(await run(['list'], { GPUPROV_STATE_DIR: join(dir, 'state-file') })).toContain(`${join(dir, 'state-file')} is a file`);
  });
});
