/**
 * GPU model names as users write them (`A100-80GB`, `H100`, `RTX4090`) matched against the
 * names vendors list (`NVIDIA GeForce RTX 4090`, `H100-80G-PCIe`, `nvidia_h100`). Pure.
 */

/** Split a requested model such as `A100-80GB` into its upper-case name and memory. */
export function parseModel(model: string): { name: string; memoryGiB?: number } {
  const m = /^(.*?)[-_ ]?(\d+)GB$/i.exec(model);
  return m ? { name: m[1]!.toUpperCase(), memoryGiB: Number(m[2]) } : { name: model.toUpperCase() };
}

function tokens(s: string): string[] {
  return s.toUpperCase().split(/[^A-Z0-9]+/).filter(Boolean);
}

/**
 * The model name (memory already split off) equals consecutive tokens of the vendor name:
 * `RTX4090` matches `NVIDIA GeForce RTX 4090` and `RTX4090_24GB`; `A10` does not match `A100 PCIE`.
 */
export function modelMatches(vendorName: string, model: string): boolean {
  const want = model.replace(/[^A-Z0-9]/gi, '').toUpperCase();
  const have = tokens(vendorName);
  for (let i = 0; i < have.length; i++) {
    let acc = '';
    for (let j = i; j < have.length && acc.length < want.length; j++) {
      acc += have[j];
      if (acc === want) return true;
    }
  }
  return false;
}

/**
 * The requested model (memory included) against a vendor name by tokens: the first token must
 * appear as is (`H100` matches `H100-80G-PCIe`, `nvidia_h100`); a further token starting with
 * digits needs a vendor token starting with the same digits (`A100-80GB` needs an `80…` token).
 */
export function gpuMatches(wanted: string, vendor: string): boolean {
  const [base, ...rest] = tokens(wanted);
  const have = tokens(vendor);
  if (base === undefined || !have.includes(base)) return false;
  return rest.every((r) => {
    const digits = /^\d+/.exec(r)?.[0];
    return digits === undefined ? have.includes(r) : have.some((h) => h.startsWith(digits));
  });
}
