/**
 * The values of `start`'s and `offers`' VM flags that need more than a pattern: `--gpu` (its
 * form, its count and a known model) and the comma-separated lists (`--cloud`, `--region`,
 * `--instance-type`); and the plain formats (durations, prices, whole numbers), whose bounds are
 * the VM spec schema's. Each refusal is an InputError naming the flag and the fix.
 *
 * | value                               | answer                                              |
 * |-------------------------------------|-----------------------------------------------------|
 * | `--gpu H100`, `h100:8`, `H100:4+`   | the request (`H100` is exactly one GPU)             |
 * | `--gpu H100x8`, `8xH100`            | refused: write `H100:8`                             |
 * | `--gpu H10`, `A1OO:2`               | refused: did you mean H100 / A100? (src/core/gpu-models.ts) |
 * | `--gpu H100:0`, `H100:17`           | refused: 1 to 16                                    |
 * | a list with an empty item (`a,,b`)  | refused                                             |
 * | a list naming one value twice       | refused: name each once                             |
 * | `--spot`, `--spot auto`             | `only`, `auto`; any other value refused             |
 */
import { InputError } from '../core/errors';
import { countAsMultiplier, gpuModelProblem, nearestGpuModel } from '../core/gpu-models';
import type { GpuRequest, SpotMode } from '../core/provider';
import { show } from './flags';

const GPU_FIX = 'write MODEL, MODEL:N (exactly N GPUs) or MODEL:N+ (at least N), e.g. --gpu H100:1 or --gpu H100:4+';

/**
 * `--gpu MODEL[:N][+]`: `H100` and `H100:1` are exactly one GPU, `h100:8` exactly eight, `H100:4+`
 * at least four (`H100+`: at least one); `a100-80gb:2` → `{ model: 'A100-80GB', count: 2 }`.
 */
export function parseGpu(s: string): GpuRequest {
  const times = countAsMultiplier(s);
  if (times)
    throw new InputError(
      '--gpu',
      `${show(s)} writes the GPU count as a multiplier`,
      `write MODEL:N, e.g. --gpu ${nearestGpuModel(times.model) ?? times.model}:${times.count} (or :${times.count}+ for at least ${times.count})`,
    );
  const m = /^([A-Za-z][A-Za-z0-9-]{0,23})(?::(\d{1,2}))?(\+)?$/.exec(s.trim());
  if (!m) throw new InputError('--gpu', `${show(s)} is not a GPU spec`, GPU_FIX);
  const count = m[2] === undefined ? 1 : Number(m[2]);
  if (!Number.isInteger(count) || count < 1 || count > 16)
    throw new InputError('--gpu', `GPU count ${m[2] ?? ''} is out of range`, 'use a count from 1 to 16, e.g. --gpu A100:8 or --gpu A100:4+');
  const problem = gpuModelProblem(m[1]!);
  if (problem) throw new InputError('--gpu', problem.message, problem.fix);
  return { model: m[1]!.toUpperCase(), count, ...(m[3] ? { atLeast: true } : {}) };
}

/** A comma-separated flag value as its items (trimmed): refused when an item is empty or given twice. */
export function listValue(field: string, s: string): string[] {
  const items = s.split(',').map((x) => x.trim());
  if (items.some((x) => x === '')) throw new InputError(field, `${show(s)} has an empty item`, `separate values with commas, e.g. ${field} a,b`);
  const twice = items.find((x, i) => items.indexOf(x) !== i);
  if (twice !== undefined)
    throw new InputError(field, `${show(s)} names ${show(twice)} twice`, `name each once, e.g. ${field} ${[...new Set(items)].join(',')}`);
  return items;
}

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `90m`, `8h`, `1h30m`, `2d` → ms. Bounds are the VM spec schema's (1 minute to 30 days for a TTL). */
export function parseDuration(field: string, s: string): number {
  const parts = [...s.trim().matchAll(/(\d+)([smhd])/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== s.trim()) {
    throw new InputError(field, `${show(s)} is not a duration`, `write a number and a unit (s, m, h, d), e.g. ${field} 8h, 90m or 1h30m`);
  }
  return parts.reduce((sum, p) => sum + Number(p[1]) * UNITS[p[2]!]!, 0);
}

/** `--max-price` (or another USD amount: `field`, `fix`): a finite number. */
export function parsePrice(s: string, field = '--max-price', fix = 'give USD per hour, e.g. --max-price 2.50'): number {
  const n = Number(s);
  if (s.trim() === '' || !/^[\d.eE+-]+$/.test(s.trim()) || !Number.isFinite(n)) throw new InputError(field, `${show(s)} is not a number`, fix);
  return n;
}

/** `--disk-gb`: a whole number of GB. */
export function parseDiskGb(s: string): number {
  if (!/^\d{1,6}$/.test(s.trim())) throw new InputError('--disk-gb', `${show(s)} is not a whole number of GB`, 'e.g. --disk-gb 200');
  return Number(s.trim());
}

/** `--parallel`: a whole number. */
export function parseParallel(s: string): number {
  if (!/^\d{1,3}$/.test(s.trim())) throw new InputError('--parallel', `${show(s)} is not a whole number`, 'e.g. --parallel 3');
  return Number(s.trim());
}

/** A comma-separated list flag, when given. */
export function list(field: string, s: string | undefined): string[] | undefined {
  return s === undefined ? undefined : listValue(field, s);
}

/** `--spot` (alone: `only`) or `--spot auto`. */
export function parseSpot(s: string): SpotMode {
  if (s === 'only' || s === 'auto') return s;
  throw new InputError('--spot', `${show(s)} is not a spot mode`, 'write --spot (spot only) or --spot auto (spot first, then on-demand)');
}
