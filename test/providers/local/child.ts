/**
 * A second process using a local cloud: `tsx child.ts <root> <faultsFile> <op-json>`.
 * Prints `{"ok": result}` or `{"error": {"kind", "message"}}` as one JSON line.
 */
import { ProviderError } from '../../../src/core/errors';
import { LocalProvider } from '../../../src/providers/local';
import type { InstanceSpec, Location, Offer } from '../../../src/core/provider';

type Op = { op: 'observe'; at: Location; vmName: string } | { op: 'plan' } | { op: 'create'; offer: Offer; spec: InstanceSpec };

async function main(): Promise<void> {
  const [root, faultsFile, json] = process.argv.slice(2);
  if (!root || !faultsFile || !json) throw new Error('usage: child.ts <root> <faultsFile> <op-json>');
  const p = new LocalProvider({ root, faultsFile, deployment: 'conformance' });
  const op = JSON.parse(json) as Op;
  try {
    const ok =
      op.op === 'observe'
        ? await p.observe(op.at, op.vmName)
        : op.op === 'plan'
          ? await p.plan({ vmName: 'child', k8s: false })
          : await p.create(op.offer, {}, op.spec);
    process.stdout.write(`${JSON.stringify({ ok })}\n`);
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    process.stdout.write(`${JSON.stringify({ error: { kind: err.kind, message: err.message } })}\n`);
  }
}

void main();
