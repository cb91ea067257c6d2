/**
 * The GPU models gpuprov knows by name, and what the edge (`--gpu` of `start` and `offers`, a
 * fleet shape's `gpu.model`) says about an asked model before anything starts. Pure.
 *
 * | asked                                      | answer                                                  |
 * |--------------------------------------------|---------------------------------------------------------|
 * | a known model, any case (`h100`, `L40S`)   | known                                                   |
 * | the last words of one (`4090`, `A6000`)    | known (`RTX 4090`, `RTX A6000`), as the matcher takes it |
 * | with a form factor or memory (`H100-SXM`, `A100-80GB`) | known: the model is what is checked         |
 * | a count as a multiplier (`H100x8`, `8xH100`, `H100*8`) | refused: write `H100:8`                     |
 * | one or two edits from a known one (`H10`, `A1OO`) | refused: did you mean H100?                      |
 * | a known one with a word after it (`H100-FOO`) | refused: did you mean H100? (FOO is no form factor) |
 * | nothing like a known one (`FOO`)           | refused: the known names                                |
 *
 * A model that a cloud sells and this list lacks is one line below; until then the edge refuses
 * it rather than start a launch that no offer can match by that name.
 */
import { didYouMean } from './did-you-mean';
import { parseGpuName } from './gpu-names';

/** GPU models as vendors write them (words apart: the matcher compares their last words). */
export const KNOWN_GPU_MODELS = [
  // NVIDIA data centre
  'GB300',
  'GB200',
  'B300',
  'B200',
  'B100',
  'GH200',
  'H200',
  'H100',
  'H800',
  'H20',
  'A100',
  'A800',
  'A40',
  'A30',
  'A16',
  'A10',
  'A10G',
  'A2',
  'L40S',
  'L40',
  'L20',
  'L4',
  'L2',
  'T4',
  'T4G',
  'V100',
  'P100',
  'P40',
  'P4',
  'K80',
  'M60',
  // NVIDIA workstation
  'RTX PRO 6000',
  'RTX 6000 Ada',
  'RTX 5000 Ada',
  'RTX 4000 Ada',
  'RTX 2000 Ada',
  'RTX A6000',
  'RTX A5000',
  'RTX A4500',
  'RTX A4000',
  'RTX A2000',
  'RTX 8000',
  'RTX 6000',
  // NVIDIA consumer
  'RTX 5090',
  'RTX 5080',
  'RTX 4090',
  'RTX 4080',
  'RTX 4080 SUPER',
  'RTX 4070 Ti',
  'RTX 3090',
  'RTX 3090 Ti',
  'RTX 3080',
  'RTX 3080 Ti',
  'RTX 3070',
  'RTX 3060',
  'RTX 2080 Ti',
  // AMD
  'MI355X',
  'MI325X',
  'MI300X',
  'MI300A',
  'MI250X',
  'MI250',
  'MI210',
  'MI100',
  // Intel
  'Gaudi3',
  'Gaudi2',
  // the local test cloud's simulated GPU
  'SIM',
] as const;

/** How a model is written in `--gpu` (`RTX 4090` → `RTX4090`). */
const written = (name: string): string => parseGpuName(name).model;

/** Every way the matcher takes a known model: its words joined from any word on (`RTX4090`, `4090`), with a digit. */
function spellingsOf(name: string): string[] {
  const tokens = parseGpuName(name).tokens;
  return tokens.map((_, i) => tokens.slice(i).join('')).filter((s) => /\d/.test(s) || s === 'SIM');
}

const SPELLINGS: ReadonlySet<string> = new Set(KNOWN_GPU_MODELS.flatMap(spellingsOf));
const SHOWN = KNOWN_GPU_MODELS.map(written);

/** What is wrong with an asked GPU model, and the fix. */
export interface GpuModelProblem {
  message: string;
  fix: string;
}

const KNOWN_LIST = `known models: ${SHOWN.join(', ')}`;

/** Whether `model` (as asked: `h100`, `A100-80GB`, `4090`) names a known GPU model. */
export function isKnownGpuModel(model: string): boolean {
  return SPELLINGS.has(parseGpuName(model).model);
}

/** Why `model` names no known GPU model (see the table above), or undefined when it names one. */
export function gpuModelProblem(model: string): GpuModelProblem | undefined {
  if (isKnownGpuModel(model)) return undefined;
  const g = parseGpuName(model);
  if (g.model === '')
    return { message: `GPU model "${model}" names no model (only a maker, form factor or memory size)`, fix: `e.g. --gpu H100; ${KNOWN_LIST}` };
  const nearest = didYouMean(g.model, [...SPELLINGS]);
  const first = g.tokens[0];
  const base = first !== undefined && g.tokens.length > 1 && SPELLINGS.has(first) ? first : undefined;
  if (base)
    return {
      message: `unknown GPU model "${model}": ${base} followed by ${g.tokens.slice(1).join(' ')}, which is no form factor (SXM, PCIE, NVL) or memory size (80GB)`,
      fix: `did you mean --gpu ${base}? (or e.g. ${base}-SXM, A100-80GB)`,
    };
  if (nearest) return { message: `unknown GPU model "${model}"`, fix: `did you mean --gpu ${nearest}? ${KNOWN_LIST}` };
  return { message: `unknown GPU model "${model}"`, fix: `use one of the ${KNOWN_LIST}` };
}

/**
 * `H100x8`, `8xH100`, `H100*8`, `8 x H100`, `H100 x8`: a count written as a multiplier (or after
 * another separator: `H100/8`, `H100=8`, `H100,8`, `H100_8`, `H100 8`), when the model part is
 * known or near a known one and the whole is not a model itself. The model as asked, and the count.
 */
export function countAsMultiplier(text: string): { model: string; count: number } | undefined {
  const t = text.trim();
  if (isKnownGpuModel(t) && !/\s/.test(t)) return undefined;
  const m = /^([A-Za-z][A-Za-z0-9-]*?)\s*[xX×*/=,_\s]\s*(\d{1,3})$/.exec(t) ?? /^(\d{1,3})\s*[xX×*]\s*([A-Za-z][A-Za-z0-9-]*)$/.exec(t);
  if (!m) return undefined;
  const [model, count] = /^\d/.test(m[1]!) ? [m[2]!, m[1]!] : [m[1]!, m[2]!];
  const g = parseGpuName(model).model;
  if (!SPELLINGS.has(g) && didYouMean(g, [...SPELLINGS]) === undefined) return undefined;
  return { model: model.toUpperCase(), count: Number(count) };
}

/** The known model nearest to `model`, for a fix: itself when known. */
export function nearestGpuModel(model: string): string | undefined {
  if (isKnownGpuModel(model)) return model.toUpperCase();
  return didYouMean(parseGpuName(model).model, [...SPELLINGS]);
}
