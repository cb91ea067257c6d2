/**
 * Parsing and validation of the CLI's flags (zod at the edge). Every rejection names the field
 * and the fix; nothing is contacted before the input is valid.
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { InputError } from '../core/errors';
import type { VmSpec } from '../core/api';
import type { GpuRequest } from '../core/provider';
import { CLOUDS, KNOWN_REGIONS, NO_K8S, didYouMean, type CloudId } from './catalog';

export const VM_NAME = /^[a-z]([a-z0-9-]{0,30}[a-z0-9])?$/;

export const nameSchema = z
  .string({ error: 'is required' })
  .min(1, 'is required')
  .max(32, 'must be at most 32 characters')
  .regex(VM_NAME, 'must start with a letter and use only lowercase letters, digits and inner hyphens (e.g. gpu1)');

/**
 * `--gpu MODEL[:N][+]`: `H100` and `H100:1` are exactly one GPU, `h100:8` exactly eight, `H100:4+`
 * at least four (`H100+`: at least one); `a100-80gb:2` → `{ model: 'A100-80GB', count: 2 }`.
 */
export function parseGpu(s: string): GpuRequest {
  const fix = 'write MODEL, MODEL:N (exactly N GPUs) or MODEL:N+ (at least N), e.g. --gpu H100:1 or --gpu H100:4+';
  const m = /^([A-Za-z][A-Za-z0-9-]{0,23})(?::(\d{1,2}))?(\+)?$/.exec(s.trim());
  if (!m) throw new InputError('--gpu', `"${s}" is not a GPU spec`, fix);
  const count = m[2] === undefined ? 1 : Number(m[2]);
  if (!Number.isInteger(count) || count < 1 || count > 16) throw new InputError('--gpu', `GPU count ${m[2] ?? ''} is out of range`, 'use a count from 1 to 16, e.g. --gpu A100:8 or --gpu A100:4+');
  return { model: m[1]!.toUpperCase(), count, ...(m[3] ? { atLeast: true } : {}) };
}

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `90m`, `8h`, `1h30m`, `2d` → ms; between 1 minute and 30 days. */
export function parseDuration(field: string, s: string): number {
  const parts = [...s.trim().matchAll(/(\d+)([smhd])/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== s.trim()) {
    throw new InputError(field, `"${s}" is not a duration`, `write e.g. ${field} 8h, 90m or 1h30m`);
  }
  const ms = parts.reduce((sum, p) => sum + Number(p[1]) * UNITS[p[2]!]!, 0);
  if (ms < 60_000) throw new InputError(field, `${s} is shorter than one minute`, `use at least ${field} 1m`);
  if (ms > 30 * 86_400_000) throw new InputError(field, `${s} is longer than 30 days`, `use at most ${field} 30d`);
  return ms;
}

function parsePrice(s: string): number {
  const n = Number(s);
  if (s.trim() === '' || !Number.isFinite(n)) throw new InputError('--max-price', `"${s}" is not a number`, 'give USD per hour, e.g. --max-price 2.50');
  if (n <= 0) throw new InputError('--max-price', `${s} must be above zero`, 'give USD per hour, e.g. --max-price 2.50');
  if (n > 1_000) throw new InputError('--max-price', `${s} USD/h is above the 1000 USD/h sanity limit`, 'check the unit: the price is per hour, e.g. --max-price 40');
  return n;
}

function list(field: string, s: string | undefined): string[] | undefined {
  if (s === undefined) return undefined;
  const items = s.split(',').map((x) => x.trim());
  if (items.some((x) => x === '')) throw new InputError(field, `"${s}" has an empty item`, `separate values with commas, e.g. ${field} a,b`);
  return [...new Set(items)];
}

function clouds(s: string | undefined): CloudId[] | undefined {
  const items = list('--cloud', s);
  if (!items) return undefined;
  for (const c of items) {
    if (!(CLOUDS as readonly string[]).includes(c)) {
      const hint = didYouMean(c, CLOUDS);
      throw new InputError('--cloud', `unknown cloud "${c}"`, hint ? `did you mean --cloud ${hint}? Known: ${CLOUDS.join(', ')}` : `known clouds: ${CLOUDS.join(', ')}`);
    }
  }
  return items as CloudId[];
}

function regions(s: string | undefined, chosen: CloudId[] | undefined): string[] | undefined {
  const items = list('--region', s);
  if (!items) return undefined;
  for (const r of items) {
    if (!/^[a-z][a-z0-9-]{1,30}$/.test(r)) throw new InputError('--region', `"${r}" is not a region name`, 'use the cloud\'s region id, e.g. --region us-east-1');
  }
  if (chosen && chosen.every((c) => KNOWN_REGIONS[c])) {
    const known = chosen.flatMap((c) => KNOWN_REGIONS[c] ?? []);
    for (const r of items) {
      if (!known.includes(r)) {
        const hint = didYouMean(r, known);
        throw new InputError('--region', `region "${r}" is not one of ${chosen.join(', ')}'s`, hint ? `did you mean --region ${hint}?` : `known: ${known.join(', ')}`);
      }
    }
  }
  return items;
}

/** Shared `parseArgs` wrapper: unknown flags and missing values become InputErrors. */
export function parseFlags<T extends NonNullable<Parameters<typeof parseArgs>[0]>['options']>(args: string[], options: T, positionals = 0) {
  try {
    const r = parseArgs({ args, options: options!, allowPositionals: true, strict: true, allowNegative: true });
    if (r.positionals.length > positionals) throw new InputError('arguments', `unexpected argument "${r.positionals[positionals]}"`, 'see --help for the accepted flags');
    return r;
  } catch (err) {
    if (err instanceof InputError) throw err;
    const msg = (err as Error).message;
    const flag = /'(--?[a-zA-Z-]+)/.exec(msg)?.[1] ?? 'arguments';
    throw new InputError(flag, msg.replace(/\. To specify a positional.*$/s, ''), 'see --help for the accepted flags');
  }
}

export const START_FLAGS = {
  name: { type: 'string' },
  gpu: { type: 'string' },
  cloud: { type: 'string' },
  region: { type: 'string' },
  'instance-type': { type: 'string' },
  'max-price': { type: 'string' },
  ttl: { type: 'string' },
  'retry-until-up': { type: 'boolean' },
  k8s: { type: 'boolean' },
  detach: { type: 'boolean' },
  json: { type: 'boolean' },
  'ssh-key': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

interface StartValues {
  name?: string; gpu?: string; cloud?: string; region?: string; 'instance-type'?: string; 'max-price'?: string; ttl?: string;
  'retry-until-up'?: boolean; k8s?: boolean; detach?: boolean; json?: boolean; 'ssh-key'?: string; help?: boolean;
}

export interface StartOptions {
  spec: VmSpec;
  detach: boolean;
  json: boolean;
  sshKeyPath?: string;
}

/** `start` flags → a validated VmSpec (without public keys, which the command adds). */
export function parseStart(args: string[]): StartOptions {
  const parsed = parseFlags(args, START_FLAGS, 1);
  const positionals = parsed.positionals;
  const v = parsed.values as StartValues;
  const rawName = v.name ?? positionals[0];
  const name = nameSchema.safeParse(rawName);
  if (!name.success) throw new InputError('--name', `name ${rawName === undefined ? '' : `"${rawName}" `}${name.error.issues[0]?.message ?? 'is invalid'}`, rawName === undefined ? 'add --name gpu1' : 'e.g. --name gpu1');
  const cl = clouds(v.cloud);
  const spec: VmSpec = { name: name.data };
  if (v.gpu !== undefined) spec.gpu = parseGpu(v.gpu);
  if (cl) spec.clouds = cl;
  const rg = regions(v.region, cl);
  if (rg) spec.regions = rg;
  const types = list('--instance-type', v['instance-type']);
  if (types) {
    for (const t of types) if (!/^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/.test(t)) throw new InputError('--instance-type', `"${t}" is not an instance type name`, 'e.g. --instance-type g5.xlarge');
    spec.instanceTypes = types;
  }
  if (v['max-price'] !== undefined) spec.maxPricePerHour = parsePrice(v['max-price']);
  if (v.ttl !== undefined) spec.ttlMs = parseDuration('--ttl', v.ttl);
  if (v['retry-until-up']) spec.retryUntilUp = true;
  if (v.k8s === true) {
    const bad = (cl ?? []).filter((c) => NO_K8S.includes(c));
    if (cl && bad.length === cl.length) throw new InputError('--k8s', `${bad.join(', ')} cannot run k3s (containers or local processes)`, 'drop --k8s, or choose a VM cloud such as --cloud aws');
    spec.k8s = 'on';
  } else if (v.k8s === false) spec.k8s = 'off';
  else spec.k8s = 'auto';
  return { spec, detach: v.detach === true, json: v.json === true, ...(v['ssh-key'] ? { sshKeyPath: v['ssh-key'] } : {}) };
}
