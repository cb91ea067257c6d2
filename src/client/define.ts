/**
 * Builds commands from their declarations: one flag table per command drives parsing, `--help`
 * and the error printer. Order for every command: help, parse and validate every input, check
 * the configuration (commands that talk to Temporal), and only then run. Any error goes to
 * `reportError` (with `--json`, exactly one JSON object).
 */
import { InputError } from '../core/errors';
import { checkServerConfig } from '../server/embedded';
import { didYouMean } from './catalog';
import { EXIT_OK, type Command, type Io } from './command';
import { parseCommandLine, show, type ArgSpec, type FlagSpec, type Parsed } from './flags';
import { renderGroupHelp, renderHelp, usageLine } from './help';
import { reportError } from './output';

export const JSON_FLAG = {
  name: 'json',
  type: 'boolean',
  meaning: 'print one JSON object on stdout instead of text (failures too: {"ok": false, "error": …})',
  default: 'off: text for people',
  example: '--json',
} as const satisfies FlagSpec;

export const HELP_FLAG = {
  name: 'help',
  short: 'h',
  type: 'boolean',
  meaning: 'show this help and exit',
  default: 'off',
  example: '--help',
} as const satisfies FlagSpec;

type WithCommon<F extends readonly FlagSpec[]> = readonly [...F, typeof JSON_FLAG, typeof HELP_FLAG];

/** A command without subcommands. */
export interface LeafSpec<F extends readonly FlagSpec[]> {
  name: string;
  /** `fleet apply` for a subcommand; default: the name. */
  path?: string;
  summary: string;
  args?: readonly ArgSpec[];
  flags: F;
  /** Words after `--` (ssh). */
  rest?: { name: string; meaning: string; example: string };
  notes?: string;
  /** Talks to Temporal: its configuration is checked before `run` (exit 2, nothing contacted). */
  temporal?: boolean;
  run(p: Parsed<WithCommon<F>> & { json: boolean }, io: Io): Promise<number>;
}

/** `--json` among the flags (before any `--`), known before parsing so parse errors are JSON too. */
export function wantsJson(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).includes('--json');
}

function wantsHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  const flags = end < 0 ? args : args.slice(0, end);
  return flags.includes('--help') || flags.includes('-h');
}

export function leaf<const F extends readonly FlagSpec[]>(spec: LeafSpec<F>): Command {
  const path = spec.path ?? spec.name;
  const flags = [...spec.flags, JSON_FLAG, HELP_FLAG] as unknown as WithCommon<F>;
  const page = {
    path,
    summary: spec.summary,
    flags,
    ...(spec.args ? { args: spec.args } : {}),
    ...(spec.rest ? { rest: spec.rest } : {}),
    ...(spec.notes ? { notes: spec.notes } : {}),
  };
  return {
    name: spec.name,
    summary: spec.summary,
    usage: usageLine(page),
    flags,
    help: () => renderHelp(page),
    async run(args, io) {
      const json = wantsJson(args);
      try {
        if (wantsHelp(args)) {
          io.out(renderHelp(page));
          return EXIT_OK;
        }
        const parsed = parseCommandLine({ path, flags, ...(spec.args ? { args: spec.args } : {}), rest: spec.rest !== undefined }, args);
        if (spec.temporal) checkServerConfig(io.env);
        return await spec.run({ ...parsed, json: (parsed.values as { json?: boolean }).json === true }, io);
      } catch (err) {
        return reportError(io, err, json);
      }
    },
  };
}

/** A command whose first argument picks a subcommand (`fleet apply`, `server start`). */
export function group(spec: { name: string; summary: string; notes?: string; subcommands: readonly Command[] }): Command {
  const help = (): string => renderGroupHelp(spec.name, spec.summary, spec.subcommands, spec.notes);
  return {
    name: spec.name,
    summary: spec.summary,
    usage: `provision ${spec.name} <${spec.subcommands.map((s) => s.name).join('|')}> [flags]`,
    subcommands: spec.subcommands,
    help,
    async run(args, io) {
      const [sub, ...rest] = args;
      if (sub === '--help' || sub === '-h' || sub === 'help') {
        io.out(help());
        return EXIT_OK;
      }
      const cmd = spec.subcommands.find((c) => c.name === sub);
      if (cmd) return cmd.run(rest, io);
      const names = spec.subcommands.map((c) => c.name);
      const hint = sub === undefined || sub.startsWith('-') ? undefined : didYouMean(sub, names);
      const what =
        sub === undefined || sub.startsWith('-')
          ? `provision ${spec.name} needs a subcommand: ${names.join(', ')}`
          : `unknown subcommand ${show(sub)} of provision ${spec.name}`;
      const fix = hint
        ? `did you mean "provision ${spec.name} ${hint}"?`
        : `use one of: ${names.map((n) => `provision ${spec.name} ${n}`).join(', ')} (see provision ${spec.name} --help)`;
      return reportError(io, new InputError(spec.name, what, fix), wantsJson(args));
    },
  };
}
