/**
 * Bad input, table-driven: every case exits 2, names the field, and starts nothing (the connect
 * step is never reached: TEMPORAL_ADDRESS points at a port where nothing listens, and no
 * embedded server may be started, so any attempt to go further would fail differently).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../../src/client/cli';
import type { Io } from '../../../src/client/command';

function io(): Io & { outText: string; errText: string } {
  const home = mkdtempSync(join(tmpdir(), 'gpuprov-badinput-'));
  const o = {
    outText: '',
    errText: '',
    out: (s: string) => void (o.outText += s),
    err: (s: string) => void (o.errText += s),
    isTTY: false,
    env: { HOME: home, PATH: process.env.PATH, TEMPORAL_ADDRESS: '127.0.0.1:1', GPUPROV_STATE_DIR: join(home, 'state') },
  };
  return o;
}

const CASES: [string, string[], string][] = [
  ['no name', ['start'], '--name'],
  ['empty name', ['start', '--name', ''], '--name'],
  ['uppercase name', ['start', '--name', 'GPU1'], '--name'],
  ['underscore name', ['start', '--name', 'gpu_1'], '--name'],
  ['name starting with a digit', ['start', '--name', '1gpu'], '--name'],
  ['name ending with a hyphen', ['start', '--name', 'gpu-'], '--name'],
  ['name too long', ['start', '--name', 'a'.repeat(33)], '--name'],
  ['name with a dot', ['start', '--name', 'gpu.1'], '--name'],
  ['name with a space', ['start', '--name', 'gpu 1'], '--name'],
  ['gpu without model', ['start', '--name', 'g', '--gpu', ':1'], '--gpu'],
  ['gpu count zero', ['start', '--name', 'g', '--gpu', 'H100:0'], '--gpu'],
  ['gpu count too big', ['start', '--name', 'g', '--gpu', 'H100:64'], '--gpu'],
  ['gpu count not a number', ['start', '--name', 'g', '--gpu', 'H100:x'], '--gpu'],
  ['gpu with spaces inside', ['start', '--name', 'g', '--gpu', 'H 100'], '--gpu'],
  ['gpu negative count', ['start', '--name', 'g', '--gpu', 'H100:-1'], '--gpu'],
  ['price not a number', ['start', '--name', 'g', '--max-price', 'cheap'], '--max-price'],
  ['price zero', ['start', '--name', 'g', '--max-price', '0'], '--max-price'],
  ['price negative', ['start', '--name', 'g', '--max-price', '-3'], '--max-price'],
  ['price infinite', ['start', '--name', 'g', '--max-price', 'Infinity'], '--max-price'],
  ['price absurd', ['start', '--name', 'g', '--max-price', '50000'], '--max-price'],
  ['price NaN', ['start', '--name', 'g', '--max-price', 'NaN'], '--max-price'],
  ['ttl without unit', ['start', '--name', 'g', '--ttl', '8'], '--ttl'],
  ['ttl unknown unit', ['start', '--name', 'g', '--ttl', '8y'], '--ttl'],
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
  ['--k8s on a container cloud', ['start', '--name', 'g', '--cloud', 'local', '--k8s'], '--k8s'],
  ['--k8s on runpod and vastai', ['start', '--name', 'g', '--cloud', 'runpod,vastai', '--k8s'], '--k8s'],
  ['unknown flag', ['start', '--name', 'g', '--gpus', 'H100'], '--gpus'],
  ['flag missing its value', ['start', '--name', 'g', '--gpu'], '--gpu'],
  ['boolean flag with a value', ['start', '--name', 'g', '--detach=yes'], '--detach'],
  ['extra positional', ['start', 'g', 'h'], 'arguments'],
  ['status without name', ['status'], 'NAME'],
  ['status bad name', ['status', 'Bad'], 'NAME'],
  ['down without name', ['down'], 'NAME'],
  ['cancel bad name', ['cancel', 'x_y'], 'NAME'],
  ['offers with unknown cloud', ['offers', '--cloud', 'ibm'], '--cloud'],
  ['offers with bad gpu', ['offers', '--gpu', 'A100:99'], '--gpu'],
  ['list with unknown flag', ['list', '--everything'], '--everything'],
  ['kubeconfig without name', ['kubeconfig'], 'NAME'],
  ['kubeconfig bad name', ['kubeconfig', 'GPU1'], 'NAME'],
  ['kubeconfig port not a number', ['kubeconfig', 'g', '--port', 'http'], '--port'],
  ['kubeconfig port out of range', ['kubeconfig', 'g', '--port', '70000'], '--port'],
  ['kubeconfig --out without a value', ['kubeconfig', 'g', '--out'], '--out'],
  ['kubeconfig unknown flag', ['kubeconfig', 'g', '--context', 'x'], '--context'],
  ['tunnel without name', ['tunnel'], 'NAME'],
  ['tunnel port zero', ['tunnel', 'g', '--port', '0'], '--port'],
  ['tunnel --identity without a value', ['tunnel', 'g', '--identity'], '--identity'],
  ['tunnel extra positional', ['tunnel', 'g', 'h'], 'arguments'],
];

describe('bad input → exit 2, the field named, nothing started', () => {
  it(`has at least 30 cases (${CASES.length})`, () => {
    expect(CASES.length).toBeGreaterThanOrEqual(30);
  });

  it.each(CASES)('%s', async (_what, argv, field) => {
    const o = io();
    const code = await runCli(argv, o);
    expect(code, o.errText).toBe(2);
    expect(o.errText).toContain(`error: ${field}`);
    expect(o.errText).toMatch(/fix: \S/);
    expect(o.errText).not.toContain('could not connect');
  });

  it('--json reports the field as JSON on stdout', async () => {
    const o = io();
    expect(await runCli(['start', '--name', 'g', '--ttl', 'soon', '--json'], o)).toBe(2);
    expect(JSON.parse(o.outText)).toMatchObject({ ok: false, error: { kind: 'InvalidInput', field: '--ttl' } });
  });

  it('an unknown command suggests the nearest one', async () => {
    const o = io();
    expect(await runCli(['lsit'], o)).toBe(2);
    expect(o.errText).toContain('did you mean "provision list"');
  });
});
