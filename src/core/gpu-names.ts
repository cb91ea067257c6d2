/**
 * GPU model names: one normaliser for what users type (`H100`, `a100-80gb`, `RTX4090`) and what
 * vendors list (`NVIDIA A100 80GB PCIe`, `H100-80G-PCIe`, `nvidia_h100`, `H100 (80 GB SXM5)`,
 * `NVIDIA GeForce RTX 4090`). Pure.
 */

/** Maker and product-line words that never tell two GPUs apart. */
const NOISE = new Set(['NVIDIA', 'AMD', 'GEFORCE', 'TESLA', 'QUADRO', 'RADEON', 'INSTINCT', 'GPU', 'GENERATION']);
/** Form factors and memory kinds: a variant of a model, not another model (`H100 SXM` is an H100). */
const VARIANT = /^(SXM\d*|PCIE\d*|NVL|NVLINK|HBM\d*E?|GDDR\d+X?|OAM)$/;
const MEMORY = /^(\d+)(GB|GIB|G)$/;
const MEMORY_UNIT = /^(GB|GIB|G)$/;

/** A GPU name taken apart. */
export interface GpuName {
  /** Model tokens, upper-case, without maker words, memory and variants: `['RTX', '4090']`, `['A100']`. */
  tokens: string[];
  /** The tokens joined: `RTX4090`, `A100`; empty when the name holds no model. */
  model: string;
  /** Form factors named (`SXM5`, `PCIE`, `NVL`). */
  variants: string[];
  /** Memory named in the text (`80GB`, `80G`, `80 GB`). */
  memoryGiB?: number;
}

/**
 * Take a GPU name apart: `NVIDIA A100 80GB PCIe` → A100, 80 GiB, PCIE; `A100-80GB` → A100, 80 GiB;
 * `a100` → A100; `H100 SXM` → H100, SXM; `nvidia_h100` → H100; `RTX 4090` → RTX4090.
 */
export function parseGpuName(name: string): GpuName {
  const raw = name
    .toUpperCase()
    .split(/[^A-Z0-9]+/)
    .filter(Boolean);
  const tokens: string[] = [];
  const variants: string[] = [];
  let memoryGiB: number | undefined;
  for (let i = 0; i < raw.length; i++) {
    const t = raw[i]!;
    const mem = MEMORY.exec(t);
    if (mem) {
      memoryGiB ??= Number(mem[1]);
    } else if (/^\d+$/.test(t) && MEMORY_UNIT.test(raw[i + 1] ?? '')) {
      memoryGiB ??= Number(t);
      i++;
    } else if (VARIANT.test(t)) {
      variants.push(t);
    } else if (!NOISE.has(t)) {
      tokens.push(t);
    }
  }
  return { tokens, model: tokens.join(''), variants, ...(memoryGiB === undefined ? {} : { memoryGiB }) };
}

/** The normalised spelling of a name: model, variants, then memory (`A100-PCIE-80GB`, `H100-SXM`, `RTX4090`). */
export function normalizeGpuName(name: string): string {
  const g = parseGpuName(name);
  return [g.model, ...g.variants, ...(g.memoryGiB === undefined ? [] : [`${g.memoryGiB}GB`])].filter(Boolean).join('-');
}

/** Memory within 10% counts as the same (vendors list 79.6 GiB, 80 GB, 81920 MiB for one card). */
function sameMemory(have: number, want: number): boolean {
  return Math.abs(have - want) <= want * 0.1;
}

/**
 * A requested model against a vendor's GPU name (and the memory the vendor lists, if any).
 * - model: the requested model equals the vendor's last model tokens joined (`RTX4090` and `4090`
 *   match `NVIDIA GeForce RTX 4090`, `A6000` matches `RTX A6000`; `A10` never matches `A100`,
 *   `L40` never matches `L40S`, `RTX` alone matches nothing);
 * - variants named in the request must be listed (`H100-SXM` matches `H100 SXM5`, not `H100 PCIe`);
 * - memory named in the request must be known and within 10% (`A100-80GB` needs an 80 GB card).
 */
export function gpuModelMatches(wanted: string, vendorName: string, vendorMemoryGiB?: number): boolean {
  const w = parseGpuName(wanted);
  const h = parseGpuName(vendorName);
  if (w.model === '') return false;
  let suffix = '';
  let found = false;
  for (let i = h.tokens.length - 1; i >= 0 && !found && suffix.length < w.model.length; i--) {
    suffix = h.tokens[i]! + suffix;
    found = suffix === w.model;
  }
  if (!found) return false;
  if (!w.variants.every((v) => h.variants.some((x) => x.startsWith(v)))) return false;
  if (w.memoryGiB === undefined) return true;
  const mem = vendorMemoryGiB ?? h.memoryGiB;
  return mem !== undefined && sameMemory(mem, w.memoryGiB);
}
