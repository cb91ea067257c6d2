/**
 * THE schema of a VM spec (zod at the edge): `start`'s flags after parsing and the `vm:` of every
 * fleet group go through it, so both accept and refuse the same things. Bounds (VM_LIMITS) are
 * sanity limits against typos, not quotas: a TTL from 1 minute to 30 days, a price cap from
 * 0.01 to 1000 USD per hour, 1 to 16 GPUs of a known model (src/core/gpu-models.ts), OpenSSH public
 * keys only, each cloud, region and instance type named once, k3s only where a cloud can run it,
 * spot only (`spot: only`) where a named cloud sells it (src/core/markets.ts).
 */
import { z } from 'zod';
import { PARALLEL_MAX, PARALLEL_MIN } from '../core/hedge';
import { gpuModelProblem } from '../core/gpu-models';
import { imageDiskOf, imageDiskProblem } from '../core/image-disk';
import { marketProblem } from '../core/markets';
import type { SpotMode } from '../core/provider';
import { didYouMean } from './catalog';
import { CLOUD_NAMES, CLOUD_TABLE, isCloudName, type CloudName } from '../core/clouds';

export const VM_LIMITS = {
  ttlMs: { min: 60_000, max: 30 * 86_400_000 },
  /** USD per hour. */
  maxPricePerHour: { min: 0.01, max: 1_000 },
  /** USD, per VM (a fleet group's `vm.budgetUsd` applies to each of its VMs). */
  budgetUsd: { min: 0.01, max: 100_000 },
  gpuCount: { min: 1, max: 16 },
  /** GB; each cloud has its own range within (src/core/image-disk.ts). */
  diskGb: { min: 8, max: 65_536 },
  publicKeys: 16,
  /** Offers in flight at once (`--parallel`, src/core/hedge.ts). */
  parallel: { min: PARALLEL_MIN, max: PARALLEL_MAX },
} as const;

export const VM_NAME = /^[a-z]([a-z0-9-]{0,30}[a-z0-9])?$/;
export const GPU_MODEL = /^[A-Za-z][A-Za-z0-9-]{0,23}$/;
export const REGION_NAME = /^[a-z][a-z0-9-]{1,30}$/;
export const INSTANCE_TYPE = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;

export const nameSchema = z
  .string({ error: 'is required' })
  .min(1, 'is required')
  .max(32, 'must be at most 32 characters')
  .regex(VM_NAME, 'must start with a letter and use only lowercase letters, digits and inner hyphens (e.g. gpu1)');

const KEY_TYPES = [
  'ssh-ed25519',
  'ssh-rsa',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'sk-ssh-ed25519@openssh.com',
  'sk-ecdsa-sha2-nistp256@openssh.com',
];

/** Why `line` is not one OpenSSH public key (`TYPE BASE64 [comment]`), or undefined when it is. */
export function publicKeyProblem(line: string): string | undefined {
  if (/PRIVATE KEY/.test(line)) return 'is a PRIVATE key: give the public one (the .pub file)';
  if (/[\r\n]/.test(line.trim())) return 'must be one line (one key per entry)';
  const [type, blob] = line.trim().split(/\s+/);
  if (!type || !KEY_TYPES.includes(type)) return `must start with a key type (${KEY_TYPES.slice(0, 3).join(', ')}, …)`;
  if (!blob || !/^[A-Za-z0-9+/]+={0,2}$/.test(blob)) return 'has no base64 key after its type';
  const raw = Buffer.from(blob, 'base64');
  const len = raw.length >= 4 ? raw.readUInt32BE(0) : -1;
  if (len !== type.length || raw.subarray(4, 4 + len).toString('latin1') !== type || raw.length < 4 + len + 16)
    return `is not a valid ${type} key (its base64 does not encode one)`;
  return undefined;
}

const between = (min: number, max: number, what: string, unit: (n: number) => string) =>
  z.number({ error: `${what} must be a number` }).refine((n) => Number.isFinite(n) && n >= min && n <= max, {
    error: (iss) => `${what} ${unit(iss.input as number)} is out of range: use ${unit(min)} to ${unit(max)}`,
  });

/** 2592000000 → `30d`, 30000 → `30s`, 1 → `1ms`. */
function span(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1_000],
  ] as const)
    if (ms !== 0 && ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

const unique = (xs: readonly string[]): boolean => new Set(xs).size === xs.length;
const twice = (what: string, xs: unknown): string => {
  const list = Array.isArray(xs) ? xs.map(String) : [];
  return `${what} "${list.find((x, i) => list.indexOf(x) !== i) ?? ''}" is named twice: name each once`;
};

/** `VmSpec.reserved` (src/core/reservation.ts): a reservation id, a capacity block offering with its query, or a queue with its wait. */
const reservedSchema = z.discriminatedUnion(
  'kind',
  [
    z
      .object({
        kind: z.literal('reservation'),
        id: z
          .string()
          .min(1, 'the reservation id must not be empty')
          .max(128)
          .regex(/^[\x21-\x7e]+$/, 'the reservation id must be printable, without spaces')
          .optional(),
      })
      .strict(),
    z
      .object({
        kind: z.literal('capacity-block'),
        offeringId: z
          .string()
          .min(1)
          .max(256)
          .regex(/^[\x21-\x7e]+$/, 'the offering id must be printable, without spaces'),
        query: z
          .object({
            count: z.number().int().min(1).max(64),
            durationHours: z
              .number()
              .int()
              .min(1)
              .max(24 * 182),
            startAfter: z.iso.datetime().optional(),
            gpuModel: z.string().optional(),
            gpuCount: z.number().int().min(1).max(16).optional(),
            regions: z.array(z.string()).optional(),
            instanceTypes: z.array(z.string()).optional(),
          })
          .strict()
          .optional(),
      })
      .strict(),
    z
      .object({
        kind: z.literal('queue'),
        waitMs: z
          .number()
          .int()
          .min(60_000, 'wait at least 1 minute')
          .max(7 * 86_400_000, 'wait at most 7 days'),
      })
      .strict(),
  ],
  { error: 'reserved must be a reservation, a capacity-block or a queue' },
);

const fields = {
  gpu: z
    .object({
      // Not upper-cased here: a fleet's stored shape must compare equal when applied again.
      model: z
        .string()
        .regex(GPU_MODEL, 'GPU model must be a name like H100 or A100-80GB')
        .superRefine((m, ctx) => {
          const p = GPU_MODEL.test(m) ? gpuModelProblem(m) : undefined;
          if (p) ctx.addIssue({ code: 'custom', message: `${p.message}: ${p.fix}`, params: { fix: p.fix } });
        }),
      count: z
        .number()
        .int('GPU count must be a whole number')
        .min(VM_LIMITS.gpuCount.min, 'GPU count must be at least 1')
        .max(VM_LIMITS.gpuCount.max, `GPU count must be at most ${VM_LIMITS.gpuCount.max}`),
      // `MODEL:N+` (GpuRequest.atLeast): at least N GPUs.
      atLeast: z.boolean().optional(),
    })
    .strict()
    .optional(),
  clouds: z
    .array(
      z.string().refine(isCloudName, {
        error: (iss) => {
          const hint = didYouMean(String(iss.input), CLOUD_NAMES);
          return `unknown cloud "${String(iss.input)}"${hint ? ` (did you mean ${hint}?)` : ''}; known: ${CLOUD_NAMES.join(', ')}`;
        },
      }),
    )
    .min(1, 'name at least one cloud, or leave clouds out')
    .refine(unique, { error: (iss) => twice('cloud', iss.input) })
    .optional(),
  regions: z
    .array(z.string().regex(REGION_NAME, "a region is a cloud's region id, e.g. us-east-1"))
    .min(1, 'name at least one region, or leave regions out')
    .refine(unique, { error: (iss) => twice('region', iss.input) })
    .optional(),
  instanceTypes: z
    .array(z.string().regex(INSTANCE_TYPE, 'an instance type is a name like g5.xlarge'))
    .min(1, 'name at least one instance type, or leave them out')
    .refine(unique, { error: (iss) => twice('instance type', iss.input) })
    .optional(),
  maxPricePerHour: between(VM_LIMITS.maxPricePerHour.min, VM_LIMITS.maxPricePerHour.max, 'price cap', (n) => `${n} USD/h`).optional(),
  ttlMs: between(VM_LIMITS.ttlMs.min, VM_LIMITS.ttlMs.max, 'TTL', span).optional(),
  budgetUsd: between(VM_LIMITS.budgetUsd.min, VM_LIMITS.budgetUsd.max, 'budget', (n) => `${n} USD`).optional(),
  retryUntilUp: z.boolean().optional(),
  k8s: z.enum(['auto', 'on', 'off'], { error: 'k8s must be auto, on or off' }).optional(),
  publicKeys: z
    .array(
      z.string().superRefine((k, ctx) => {
        const p = publicKeyProblem(k);
        if (p) ctx.addIssue({ code: 'custom', message: `public key ${p}` });
      }),
    )
    .max(VM_LIMITS.publicKeys, `at most ${VM_LIMITS.publicKeys} public keys`)
    .optional(),
  // Each cloud's own form is checked against the chosen clouds (crossCheck) and by the plan.
  image: z
    .string()
    .min(1, 'image must not be empty')
    .max(255, 'image must be at most 255 characters')
    .regex(/^[\x21-\x7e]( ?[\x21-\x7e])*$/, 'image must be printable, without leading, trailing or double spaces')
    .optional(),
  diskGb: z
    .number({ error: 'disk size must be a number' })
    .int('disk size must be a whole number of GB')
    .min(VM_LIMITS.diskGb.min, `disk size must be at least ${VM_LIMITS.diskGb.min} GB`)
    .max(VM_LIMITS.diskGb.max, `disk size must be at most ${VM_LIMITS.diskGb.max} GB`)
    .optional(),
  spot: z.enum(['only', 'auto'], { error: 'spot must be only or auto' }).optional(),
  reserved: reservedSchema.optional(),
  parallel: z
    .number({ error: 'parallel must be a number' })
    .int('parallel must be a whole number')
    .min(VM_LIMITS.parallel.min, `parallel must be at least ${VM_LIMITS.parallel.min}`)
    .max(VM_LIMITS.parallel.max, `parallel must be at most ${VM_LIMITS.parallel.max} (offers in flight at once)`)
    .optional(),
};

interface CrossChecked {
  clouds?: string[] | undefined;
  regions?: string[] | undefined;
  k8s?: string | undefined;
  image?: string | undefined;
  diskGb?: number | undefined;
  spot?: SpotMode | undefined;
}

/** `spot: only` that none of the explicitly named clouds sells (with several, the plan skips those that do not). */
function marketCheck(chosen: readonly CloudName[], v: CrossChecked, ctx: z.RefinementCtx): void {
  const problems = chosen.map((c) => marketProblem(c, CLOUD_TABLE[c], v.spot));
  if (!chosen.length || problems.some((p) => p === undefined)) return;
  const message = problems.map((p) => p!.message).join('; ');
  ctx.addIssue({ code: 'custom', path: ['spot'], message, params: { fix: problems[0]!.fix } });
}

/** `--image`/`--disk-gb` that none of the explicitly named clouds can honour (with several, the plan skips those that cannot). */
function imageDiskCheck(chosen: readonly CloudName[], v: CrossChecked, ctx: z.RefinementCtx): void {
  const want = { ...(v.image !== undefined ? { image: v.image } : {}), ...(v.diskGb !== undefined ? { diskGb: v.diskGb } : {}) };
  if (!chosen.length || Object.keys(want).length === 0) return;
  const problems = chosen.map((c) => imageDiskProblem(c, imageDiskOf(c), want));
  if (problems.some((p) => p === undefined)) return;
  const first = problems[0]!;
  const message = problems.map((p) => p!.message).join('; ');
  ctx.addIssue({ code: 'custom', path: [first.flag === '--image' ? 'image' : 'diskGb'], message, params: { fix: first.fix } });
}

/** Rules between fields: regions known to the chosen clouds, k3s only on a cloud that runs it, an image/disk one of them honours. */
function crossCheck(v: CrossChecked, ctx: z.RefinementCtx): void {
  const chosen = v.clouds?.filter(isCloudName);
  if (chosen?.length && v.regions && chosen.every((c) => CLOUD_TABLE[c].regions)) {
    const known = chosen.flatMap((c) => CLOUD_TABLE[c].regions ?? []);
    for (const r of v.regions) {
      if (known.includes(r) || !REGION_NAME.test(r)) continue;
      const hint = didYouMean(r, known);
      ctx.addIssue({
        code: 'custom',
        path: ['regions'],
        message: `region "${r}" is not one of ${chosen.join(', ')}'s${hint ? ` (did you mean ${hint}?)` : ''}; known: ${known.join(', ')}`,
      });
    }
  }
  if (v.k8s === 'on' && chosen?.length && chosen.every((c) => CLOUD_TABLE[c].k3s === 'never')) {
    ctx.addIssue({
      code: 'custom',
      path: ['k8s'],
      message: `${chosen.join(', ')} cannot run k3s (containers or local processes): leave k8s out, or choose a VM cloud such as aws`,
    });
  }
  marketCheck(chosen ?? [], v, ctx);
  imageDiskCheck(chosen ?? [], v, ctx);
}

/** A VM's options without its name (a fleet group's `vm:`). */
export const vmOptionsSchema = z.object(fields).strict().superRefine(crossCheck);

/**
 * A whole VM spec (`start`). `recover` is start's only: a fleet replaces a lost slot itself, so a
 * group's `vm:` refuses it (strict) rather than relaunch beside the fleet's replacement.
 */
export const vmSpecSchema = z
  .object({ name: nameSchema, ...fields, recover: z.boolean({ error: 'recover must be true or false' }).optional() })
  .strict()
  .superRefine(crossCheck);
