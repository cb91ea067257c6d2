/**
 * Help that teaches: every flag of every command (and subcommand) appears in its --help with its
 * meaning, a default and an example, generated from the same table the parser reads; every
 * example is valid input for that command; an unknown flag anywhere gets "did you mean".
 */
import { describe, expect, it } from 'vitest';
import { COMMANDS, runCli } from '../../../src/client/cli';
import type { Command } from '../../../src/client/command';
import { recordingIo, type RecordingIo } from '../../harness/recording-io';
import { parseStart } from '../../../src/client/options';
import { parseCommandLine } from '../../../src/client/flags';

function io(): RecordingIo {
  return recordingIo({ HOME: '/nonexistent', TEMPORAL_ADDRESS: '127.0.0.1:1' });
}

/** Every runnable command with the words that reach it: `start`, `fleet apply`, … */
const LEAVES: [string, string[], Command][] = COMMANDS.flatMap((c) =>
  c.subcommands
    ? c.subcommands.map((s): [string, string[], Command] => [`${c.name} ${s.name}`, [c.name, s.name], s])
    : [[c.name, [c.name], c] as [string, string[], Command]],
);

/** The help text of one flag: its title line and the indented lines under it. */
function block(help: string, title: RegExp): string {
  const lines = help.split('\n');
  const at = lines.findIndex((l) => title.test(l));
  if (at < 0) return '';
  const end = lines.findIndex((l, i) => i > at && !l.startsWith('      '));
  return lines.slice(at, end < 0 ? undefined : end).join('\n');
}

describe('provision COMMAND --help', () => {
  it('covers every command of the top-level help', async () => {
    const o = io();
    expect(await runCli(['--help'], o)).toBe(0);
    for (const c of COMMANDS) expect(o.outText).toContain(`  ${c.name} `);
    expect(LEAVES.length).toBeGreaterThanOrEqual(16);
  });

  it.each(LEAVES)('%s: every flag with its meaning, format, default and an example', async (_name, words, cmd) => {
    const o = io();
    expect(await runCli([...words, '--help'], o)).toBe(0);
    expect(o.outText).toBe(cmd.help());
    expect(o.outText).toContain(`usage: ${cmd.usage}`);
    expect(cmd.flags?.length).toBeGreaterThanOrEqual(2);
    for (const f of cmd.flags ?? []) {
      const b = block(o.outText, new RegExp(`^ {2}(-${f.short ?? '#'}, )?--${f.name}\\b`));
      expect(b, `--${f.name} is missing from the help of ${_name}`).not.toBe('');
      expect(b).toContain(f.meaning);
      expect(b).toMatch(/\n {6}default: \S/);
      expect(b).toMatch(/\n {6}e\.g\. \S/);
      if (f.type === 'string') expect(b, `--${f.name} needs a format`).toMatch(/\n {6}format: \S/);
      if (f.negatable) expect(b).toContain(`--no-${f.name}`);
    }
  });

  it.each(LEAVES)("%s: every example parses with the command's own table", (_name, _words, cmd) => {
    for (const f of cmd.flags ?? []) {
      const parsed = parseCommandLine({ path: _name, flags: cmd.flags ?? [] }, f.example.split(' '));
      expect(Object.keys(parsed.values)).toEqual([f.name]);
    }
  });

  it.each(LEAVES)('%s: an unknown flag gets "did you mean"', async (_name, words, cmd) => {
    const o = io();
    const near = `--${cmd.flags![0]!.name}x`;
    expect(await runCli([...words, near], o)).toBe(2);
    expect(o.errText).toContain(`did you mean --${cmd.flags![0]!.name}?`);
  });

  it('start: each example of a flag is a valid start', () => {
    const start = COMMANDS.find((c) => c.name === 'start')!;
    // Reserved-capacity flags that only go with another one (src/core/reserved-ask.ts): the example with its companions.
    const block = ['--capacity-block', 'cbo-1', '--yes'];
    const companions: Record<string, string[]> = {
      'capacity-block': ['--yes', '--duration', '24h'],
      yes: ['--capacity-block', 'cbo-1', '--duration', '24h'],
      duration: block,
      count: [...block, '--duration', '24h'],
      'start-after': [...block, '--duration', '24h'],
      wait: ['--queue'],
    };
    for (const f of start.flags ?? []) {
      if (f.name === 'name' || f.name === 'help') continue;
      expect(() => parseStart(['gpu1', ...f.example.split(' '), ...(companions[f.name] ?? [])]), f.example).not.toThrow();
    }
  });

  it('documents the formats the issue asked for', () => {
    const help = COMMANDS.find((c) => c.name === 'start')!.help();
    for (const text of [
      '--ttl 1h30m',
      '--gpu H100:8',
      'MODEL:N+ (at least N)',
      '--retry-until-up',
      '--detach',
      '--json',
      '1 minute to 30 days',
      '0.01 to 1000',
    ])
      expect(help).toContain(text);
  });

  it('help COMMAND is the same page', async () => {
    const o = io();
    expect(await runCli(['help', 'offers'], o)).toBe(0);
    expect(o.outText).toBe(COMMANDS.find((c) => c.name === 'offers')!.help());
  });
});
