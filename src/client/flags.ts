/**
 * The CLI's flag tables and their parser. Each command declares its flags and arguments once
 * (`FlagSpec`, `ArgSpec`); the same table drives parsing and `--help` (./help.ts). Every
 * rejection is an InputError naming the flag and the fix: an unknown flag gets "did you mean", a
 * flag given twice or contradicting itself (`--k8s --no-k8s`) is refused, and so are an empty
 * value and a stray word.
 */
import { InputError } from '../core/errors';
import { didYouMean } from './catalog';

/** One flag: how it is parsed and everything its --help line says. */
export interface FlagSpec {
  /** Long name without dashes: `ttl` is `--ttl`. */
  readonly name: string;
  /** One letter: `f` is `-f`. */
  readonly short?: string;
  /** `boolean`: present or not; `string`: takes exactly one value. */
  readonly type: 'string' | 'boolean';
  /** Boolean only: `--no-<name>` sets it to false; giving both forms is a contradiction. */
  readonly negatable?: boolean;
  /**
   * String only: the flag may stand alone (`--spot` is `--spot only`); it takes the next word only
   * when that word is one of `choices` (so `start --spot gpu1` names the VM gpu1), or `=VALUE`.
   */
  readonly bare?: { readonly value: string; readonly choices: readonly string[] };
  /** Placeholder of the value in --help (`DURATION`). */
  readonly value?: string;
  readonly meaning: string;
  /** How the value is written, with its bounds. */
  readonly format?: string;
  /** What happens without the flag. */
  readonly default: string;
  /** A complete, valid example: `--ttl 1h30m`. */
  readonly example: string;
}

/** One positional argument. */
export interface ArgSpec {
  /** `NAME` */
  readonly name: string;
  readonly meaning: string;
  readonly example: string;
  readonly required: boolean;
  /** The flag this argument stands for (`start gpu1` = `start --name gpu1`): giving both is refused. */
  readonly flag?: string;
  /** Validates the value before anything is contacted; returns it (normalised) or throws an InputError. */
  readonly check?: (raw: string) => string;
}

type ValueOf<S extends FlagSpec> = S['type'] extends 'boolean' ? boolean : string;

/** The parsed values of a flag table, by long name (absent when not given). */
export type Values<F extends readonly FlagSpec[]> = { [S in F[number] as S['name']]?: ValueOf<S> };

export interface Parsed<F extends readonly FlagSpec[]> {
  values: Values<F>;
  /** Positional arguments, checked, in ArgSpec order (undefined when an optional one is absent). */
  args: (string | undefined)[];
  /** Words after `--` (only for commands that take them). */
  rest: string[];
}

/** What the parser needs to know about a command. */
export interface CommandLine {
  /** `start`, `fleet apply`: for messages. */
  readonly path: string;
  readonly flags: readonly FlagSpec[];
  readonly args?: readonly ArgSpec[];
  /** Takes words after `--` (e.g. `ssh NAME -- command`). */
  readonly rest?: boolean;
}

/**
 * A user's text as a JSON string literal, with every invisible or control character escaped
 * (`\u200b`, `\u0007`), so what is shown is what was typed.
 */
export function show(s: string): string {
  return JSON.stringify(s).replace(/[\p{C}\p{Z}]/gu, (ch) =>
    ch === ' ' ? ch : [...ch].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''),
  );
}

const dashed = (f: FlagSpec): string => `--${f.name}`;

function unknownFlag(cl: CommandLine, token: string): InputError {
  const names = cl.flags.flatMap((f) => [dashed(f), ...(f.negatable ? [`--no-${f.name}`] : [])]);
  const typed = token.split('=')[0]!;
  const bare = /^[\x21-\x7e]+$/.test(typed) ? typed : show(typed);
  const hint = didYouMean(typed, names);
  return new InputError(
    bare,
    `unknown flag ${show(typed)} for provision ${cl.path}`,
    hint ? `did you mean ${hint}? (see provision ${cl.path} --help)` : `see provision ${cl.path} --help for its flags`,
  );
}

/** Words that read as a flag, so a string flag right before them has no value. */
const looksLikeFlag = (s: string): boolean => /^--[A-Za-z]/.test(s) || /^-[A-Za-z]$/.test(s);

/** A word that is not a flag, and the `--flag value` right before it, if any. */
interface Positional {
  word: string;
  after?: { flag: FlagSpec; text: string };
}

interface Seen {
  token: string;
  negated: boolean;
}

/** The flags of a table by long name and by short letter. */
interface Lookup {
  readonly cl: CommandLine;
  readonly byLong: ReadonlyMap<string, FlagSpec>;
  readonly byShort: ReadonlyMap<string, FlagSpec>;
}

/** A word that names a flag: which one, as what it was typed, and its `=value` if inline. */
interface FlagToken {
  flag: FlagSpec;
  token: string;
  negated: boolean;
  inline?: string;
}

/** `--name`, `--name=value`, `--no-name`: the flag it names, or an InputError. */
function readLongFlag(lk: Lookup, a: string): FlagToken {
  const eq = a.indexOf('=');
  const token = eq < 0 ? a : a.slice(0, eq);
  const inline = eq < 0 ? undefined : a.slice(eq + 1);
  const nm = token.slice(2);
  const flag = lk.byLong.get(nm);
  if (flag) return { flag, token, negated: false, inline };
  const positive = nm.startsWith('no-') ? lk.byLong.get(nm.slice(3)) : undefined;
  if (positive?.negatable) return { flag: positive, token, negated: true, inline };
  if (positive)
    throw new InputError(
      token,
      `${token} is not a flag: ${dashed(positive)} has no --no- form`,
      `leave ${dashed(positive)} out (without it: ${positive.default})`,
    );
  throw unknownFlag(lk.cl, token);
}

/** `-f`: the flag it names; a long name with one dash (`-ttl`) gets its own hint. */
function readShortFlag(lk: Lookup, a: string): FlagToken {
  const flag = a.length === 2 ? lk.byShort.get(a[1]!) : undefined;
  if (flag) return { flag, token: a, negated: false };
  const long = lk.byLong.get(a.slice(1).split('=')[0]!);
  if (long)
    throw new InputError(
      a.split('=')[0]!,
      `${show(a.split('=')[0]!)} has one dash`,
      `did you mean ${dashed(long)}? Long flags take two dashes, e.g. ${long.example}`,
    );
  throw unknownFlag(lk.cl, a);
}

/** The flag a word names, or undefined when the word is positional (`-5` included). */
function readFlag(lk: Lookup, a: string): FlagToken | undefined {
  if (a.startsWith('--') && a.length > 2) return readLongFlag(lk, a);
  if (a.startsWith('-') && a.length > 1 && !/^-\d/.test(a)) return readShortFlag(lk, a);
  return undefined;
}

/** Refuses a flag given a second time, in the same form (twice) or the other (contradiction). */
function refuseRepeat(seen: Map<string, Seen>, { flag, token, negated }: FlagToken): void {
  const before = seen.get(flag.name);
  if (before) {
    if (before.negated !== negated)
      throw new InputError(dashed(flag), `${before.token} and ${token} contradict each other`, `give one of them, e.g. ${flag.example}`);
    throw new InputError(
      dashed(flag),
      `${dashed(flag)} is given twice`,
      `give it once, e.g. ${flag.example}${flag.type === 'string' ? ' (lists are comma-separated where the flag takes one)' : ''}`,
    );
  }
  seen.set(flag.name, { token, negated });
}

/** A boolean flag's value; an inline `=value` is refused. */
function booleanValue({ flag, negated, inline }: FlagToken): boolean {
  if (inline !== undefined)
    throw new InputError(
      dashed(flag),
      `${dashed(flag)} takes no value (got ${show(inline)})`,
      `write just ${flag.negatable ? `${dashed(flag)} or --no-${flag.name}` : dashed(flag)}`,
    );
  return !negated;
}

/** A flag that may stand alone, given without `=VALUE`: the next word when it is a choice, else the bare value (a near miss is refused). */
function bareValue({ flag, token }: FlagToken, bare: NonNullable<FlagSpec['bare']>, next: string | undefined): { value: string; tookNext: boolean } {
  if (next !== undefined && bare.choices.includes(next)) return { value: next, tookNext: true };
  const hint = next !== undefined && !looksLikeFlag(next) ? didYouMean(next, bare.choices) : undefined;
  if (hint)
    throw new InputError(
      dashed(flag),
      `${token} ${show(next!)} is not one of ${bare.choices.join(', ')}`,
      `did you mean ${dashed(flag)} ${hint}? e.g. ${flag.example}`,
    );
  return { value: bare.value, tookNext: false };
}

/** A string flag's value, inline or the next word (`next`); says whether it used `next`. */
function stringValue(ft: FlagToken, next: string | undefined): { value: string; tookNext: boolean } {
  const { flag, token, inline } = ft;
  if (inline === undefined && flag.bare) return bareValue(ft, flag.bare, next);
  let value = inline;
  const tookNext = value === undefined;
  if (value === undefined) {
    if (next === undefined || looksLikeFlag(next))
      throw new InputError(dashed(flag), `${token} needs a value${flag.value ? ` (${flag.value})` : ''}`, `e.g. ${flag.example}`);
    value = next;
  }
  // An empty value would read as the flag left out (`--ssh-key ""` falls back to the default key).
  if (value.trim() === '')
    throw new InputError(
      dashed(flag),
      `${token} is empty`,
      `give ${flag.value ?? 'a value'}, e.g. ${flag.example}${flag.default.startsWith('none: required') ? '' : `, or leave ${dashed(flag)} out (without it: ${flag.default})`}`,
    );
  return { value, tookNext };
}

/** What the flag pass leaves for the argument pass. */
interface FlagPass {
  values: Record<string, string | boolean>;
  positionals: Positional[];
  rest: string[];
}

/** Reads every flag of `args` into values; words that are not flags are kept as positionals. */
function readFlags(lk: Lookup, args: readonly string[]): FlagPass {
  const values: Record<string, string | boolean> = {};
  const seen = new Map<string, Seen>();
  const positionals: Positional[] = [];
  /** The `--flag value` just read, for the hint on a stray word right after it. */
  let lastValue: Positional['after'];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') return { values, positionals, rest: args.slice(i + 1) };
    const ft = readFlag(lk, a);
    if (!ft) {
      positionals.push(lastValue ? { word: a, after: lastValue } : { word: a });
      lastValue = undefined;
      continue;
    }
    lastValue = undefined;
    refuseRepeat(seen, ft);
    if (ft.flag.type === 'boolean') {
      values[ft.flag.name] = booleanValue(ft);
      continue;
    }
    const { value, tookNext } = stringValue(ft, args[i + 1]);
    if (tookNext) i++;
    values[ft.flag.name] = value;
    lastValue = { flag: ft.flag, text: tookNext || ft.inline !== undefined || !ft.flag.bare ? `${ft.token} ${show(value)}` : ft.token };
  }
  return { values, positionals, rest: [] };
}

/** Matches positionals to the ArgSpecs in order (an argument standing for a given flag is skipped). */
function readArgs(cl: CommandLine, { values, positionals, rest }: FlagPass): (string | undefined)[] {
  const specs = cl.args ?? [];
  const out: (string | undefined)[] = specs.map(() => undefined);
  let k = 0;
  for (const p of positionals) {
    // An argument that stands for a flag the user also gave is not that argument: it is stray.
    while (k < specs.length && specs[k]!.flag !== undefined && values[specs[k]!.flag!] !== undefined) k++;
    const spec = specs[k];
    if (!spec) throw stray(cl, p);
    try {
      out[k] = spec.check ? spec.check(p.word) : p.word;
    } catch (err) {
      // `--ttl 1h 30m`: the word is more likely a broken value than this argument.
      throw p.after ? stray(cl, p) : err;
    }
    if (spec.flag) values[spec.flag] = out[k]!;
    k++;
  }
  if (rest.length > 0 && !cl.rest) throw stray(cl, { word: rest[0]! });
  specs.forEach((s, j) => {
    if (s.required && out[j] === undefined && (s.flag === undefined || values[s.flag] === undefined)) {
      throw new InputError(s.name, `${s.name} is missing: ${s.meaning}`, `e.g. provision ${cl.path} ${s.example}`);
    }
  });
  return out;
}

/** Parse `args` against the command's table; see the module comment for what is refused. */
export function parseCommandLine<F extends readonly FlagSpec[]>(cl: CommandLine & { flags: F }, args: readonly string[]): Parsed<F> {
  const lk: Lookup = {
    cl,
    byLong: new Map(cl.flags.map((f) => [f.name, f])),
    byShort: new Map(cl.flags.filter((f) => f.short).map((f) => [f.short!, f])),
  };
  const pass = readFlags(lk, args);
  const out = readArgs(cl, pass);
  return { values: pass.values as Values<F>, args: out, rest: pass.rest };
}

function stray(cl: CommandLine, p: Positional): InputError {
  if (p.after?.flag.bare) {
    const { flag, text } = p.after;
    return new InputError(
      dashed(flag),
      `unexpected argument ${show(p.word)} after ${text}: ${dashed(flag)} takes ${flag.bare!.choices.join(' or ')}, or stands alone`,
      `e.g. ${flag.example}`,
    );
  }
  if (p.after) {
    const { flag, text } = p.after;
    return new InputError(
      dashed(flag),
      `unexpected argument ${show(p.word)} after ${text}: a flag takes one value`,
      `write the value as one word (no spaces), e.g. ${flag.example}`,
    );
  }
  const usage = (cl.args ?? []).map((a) => (a.required ? a.name : `[${a.name}]`)).join(' ');
  const after = cl.rest ? ` [-- COMMAND…] (a command goes after --)` : '';
  return new InputError(
    'arguments',
    `unexpected argument ${show(p.word)}`,
    `usage: provision ${cl.path}${usage ? ` ${usage}` : ''} [flags]${after} (see --help)`,
  );
}
