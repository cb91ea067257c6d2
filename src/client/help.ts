/** `provision COMMAND --help`, rendered from the command's own flag table (./flags.ts). */
import type { ArgSpec, FlagSpec } from './flags';

/** What a help page is made of. */
export interface HelpPage {
  /** `start`, `fleet apply` */
  path: string;
  summary: string;
  args?: readonly ArgSpec[];
  flags: readonly FlagSpec[];
  /** `-- COMMAND…` after the flags (ssh). */
  rest?: { name: string; meaning: string; example: string };
  /** Free text after the flags: formats, environment. */
  notes?: string;
}

const INDENT = '      ';

function flagTitle(f: FlagSpec): string {
  const value = f.value ?? 'VALUE';
  const long = `--${f.name}${f.type === 'string' ? (f.bare ? ` [${value}]` : ` ${value}`) : ''}`;
  const forms = [...(f.short ? [`-${f.short}`] : []), long, ...(f.negatable ? [`--no-${f.name}`] : [])];
  return forms.join(', ');
}

function flagBlock(f: FlagSpec): string[] {
  return [
    `  ${flagTitle(f)}`,
    `${INDENT}${f.meaning}`,
    ...(f.format ? [`${INDENT}format: ${f.format}`] : []),
    `${INDENT}default: ${f.default}`,
    `${INDENT}e.g. ${f.example}`,
  ];
}

/** The usage line: `provision start [NAME] [flags]`. */
export function usageLine(p: Pick<HelpPage, 'path' | 'args' | 'rest'>): string {
  const args = (p.args ?? []).map((a) => (a.required ? a.name : `[${a.name}]`));
  return `provision ${[p.path, ...args].join(' ')} [flags]${p.rest ? ` [-- ${p.rest.name}]` : ''}`;
}

export function renderHelp(p: HelpPage): string {
  const lines = [`provision ${p.path} — ${p.summary}`, '', `usage: ${usageLine(p)}`];
  if (p.args?.length) {
    lines.push('', 'arguments:');
    for (const a of p.args)
      lines.push(`  ${a.name}${a.required ? '' : ' (optional)'}`, `${INDENT}${a.meaning}`, `${INDENT}e.g. provision ${p.path} ${a.example}`);
  }
  if (p.rest) lines.push('', `after --:`, `  ${p.rest.name}`, `${INDENT}${p.rest.meaning}`, `${INDENT}e.g. ${p.rest.example}`);
  lines.push('', 'flags:');
  for (const f of p.flags) lines.push(...flagBlock(f));
  if (p.notes) lines.push('', p.notes.trimEnd());
  lines.push('', 'exit codes: 0 ok, 1 failed, 2 bad input (the message names the flag and the fix; nothing was started)');
  return `${lines.join('\n')}\n`;
}

/** Help of a command with subcommands (`fleet`, `server`). */
export function renderGroupHelp(path: string, summary: string, subs: readonly { name: string; summary: string; usage: string }[], notes?: string): string {
  const width = Math.max(...subs.map((s) => s.name.length));
  return [
    `provision ${path} — ${summary}`,
    '',
    `usage: provision ${path} <${subs.map((s) => s.name).join('|')}> …`,
    '',
    ...subs.map((s) => `  ${s.name.padEnd(width)}  ${s.summary}\n  ${' '.repeat(width)}  ${s.usage}`),
    '',
    `each has its own flags: provision ${path} ${subs[0]?.name ?? ''} --help`,
    ...(notes ? ['', notes.trimEnd()] : []),
    '',
  ].join('\n');
}
