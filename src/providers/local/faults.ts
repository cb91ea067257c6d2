/**
 * The local cloud's fault file: JSON, re-read on every call so a test can edit it while a
 * worker runs. Each rule has one effect:
 * - `error` (default `Transient`): the call throws that kind (Quota blocks the region);
 * - `ambiguousCreate`: create makes the instance (sshd started), then throws `error`;
 * - `bootDelayMs`: instances created while the rule holds stay Pending that long.
 * `primitive` defaults to `create`. `region` / `instanceType` constrain only calls that have
 * them (plan has neither; observe, delete and cleanup have only a region).
 * `times` limits how often a rule fires; its counter is on disk under the cloud's root, so
 * every process using the cloud shares it. Change `id` to re-arm an identical rule.
 */
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { z } from 'zod';
import { ERROR_KINDS, ProviderError, type ErrorKind } from '../../core/errors';
import { classify, injected } from './errors';

const PRIMITIVES = ['plan', 'prepare', 'create', 'observe', 'delete', 'cleanup'] as const;
export type FaultPrimitive = (typeof PRIMITIVES)[number];

const ruleSchema = z
  .strictObject({
    id: z.string().optional(),
    region: z.string().optional(),
    instanceType: z.string().optional(),
    primitive: z.enum(PRIMITIVES).optional(),
    error: z.enum(ERROR_KINDS).optional(),
    times: z.number().int().positive().optional(),
    ambiguousCreate: z.literal(true).optional(),
    bootDelayMs: z.number().int().nonnegative().optional(),
  })
  .refine((r) => r.bootDelayMs === undefined || (r.error === undefined && r.ambiguousCreate === undefined), {
    message: 'a rule with bootDelayMs cannot also set error or ambiguousCreate',
  })
  .refine((r) => (r.ambiguousCreate === undefined && r.bootDelayMs === undefined) || (r.primitive ?? 'create') === 'create', {
    message: 'ambiguousCreate and bootDelayMs apply to create only',
  });

const fileSchema = z.strictObject({ rules: z.array(ruleSchema) });

export type FaultRule = z.infer<typeof ruleSchema>;
export type FaultFile = z.infer<typeof fileSchema>;

/** The call being made, as far as the fault rules can see it. */
export interface FaultCall {
  primitive: FaultPrimitive;
  region?: string;
  instanceType?: string;
}

/** What a create must do besides its normal work. */
export interface CreateFaults {
  /** Throw this after the instance exists. */
  ambiguous?: ErrorKind;
  bootDelayMs?: number;
}

function load(path: string | undefined): FaultRule[] {
  if (path === undefined) return [];
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new ProviderError('InvalidRequest', `local: cannot read fault file ${path}: ${(err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ProviderError('InvalidRequest', `local: fault file ${path} is not JSON: ${(err as Error).message}`);
  }
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) throw new ProviderError('InvalidRequest', `local: fault file ${path} is invalid: ${z.prettifyError(parsed.error)}`);
  return parsed.data.rules;
}

function matches(rule: FaultRule, call: FaultCall): boolean {
  if ((rule.primitive ?? 'create') !== call.primitive) return false;
  if (rule.region !== undefined && call.region !== undefined && rule.region !== call.region) return false;
  if (rule.instanceType !== undefined && call.instanceType !== undefined && rule.instanceType !== call.instanceType) return false;
  return true;
}

/** The on-disk faults state: the shared `times` counters. */
export class Faults {
  constructor(
    private readonly file: string | undefined,
    private readonly stateDir: string,
  ) {}

  /**
   * Claim one firing of rule `index`: one exclusive-create file per firing, so concurrent
   * processes never fire a `times: 1` rule twice. Bounded by `times`.
   */
  private take(rule: FaultRule, index: number): boolean {
    if (rule.times === undefined) return true;
    const key = createHash('sha256')
      .update(`${index}\n${JSON.stringify(rule)}`)
      .digest('hex')
      .slice(0, 24);
    mkdirSync(this.stateDir, { recursive: true });
    for (let n = 0; n < rule.times; n++) {
      try {
        closeSync(openSync(join(this.stateDir, `${key}.${n}`), 'wx'));
        return true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
    }
    return false;
  }

  private firing(call: FaultCall, effect: (r: FaultRule) => boolean): FaultRule | undefined {
    const rules = load(this.file);
    try {
      for (const [i, rule] of rules.entries()) {
        if (effect(rule) && matches(rule, call) && this.take(rule, i)) return rule;
      }
    } catch (err) {
      throw classify(err, `fault state ${this.stateDir}`);
    }
    return undefined;
  }

  /** Throw the first armed plain-error rule for this call, if any. */
  check(call: FaultCall): void {
    const rule = this.firing(call, (r) => r.ambiguousCreate === undefined && r.bootDelayMs === undefined);
    if (rule) throw injected(rule.error ?? 'Transient', where(call));
  }

  /** Ambiguous-outcome and boot-delay rules for a create (consumed now, applied by the caller). */
  forCreate(call: FaultCall): CreateFaults {
    const out: CreateFaults = {};
    const amb = this.firing(call, (r) => r.ambiguousCreate === true);
    if (amb) out.ambiguous = amb.error ?? 'Transient';
    const delay = this.firing(call, (r) => r.bootDelayMs !== undefined);
    if (delay?.bootDelayMs !== undefined) out.bootDelayMs = delay.bootDelayMs;
    return out;
  }
}

export function where(call: FaultCall): string {
  return [call.primitive, call.region, call.instanceType].filter((s) => s !== undefined).join(' ');
}
