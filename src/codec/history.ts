/**
 * A fetched history with its payloads decoded by a client's payload codecs: `fetchHistory()`
 * returns the stored (encrypted) payloads, and `provision explain` reads inputs, results and
 * failure details out of them. Every payload-shaped object (`metadata` of byte values, `data`
 * bytes) anywhere in the history goes through the codecs in one batch; plain ones pass through.
 */
import type { Payload, PayloadCodec } from '@temporalio/common';

type Slot = { holder: Record<string, unknown> | unknown[]; key: string | number };

function isPayload(o: object): o is Payload {
  const p = o as { metadata?: unknown; data?: unknown };
  return (
    p.metadata !== null &&
    typeof p.metadata === 'object' &&
    Object.keys(p.metadata).length > 0 &&
    Object.values(p.metadata).every((v) => v instanceof Uint8Array) &&
    (p.data === undefined || p.data === null || p.data instanceof Uint8Array)
  );
}

/** Every payload under `node`, with where it sits. Bounded by the history's own depth. */
function collect(node: unknown, slot: Slot | undefined, out: { payload: Payload; slot: Slot }[]): void {
  if (node === null || typeof node !== 'object' || node instanceof Uint8Array) return;
  if (slot && isPayload(node)) {
    out.push({ payload: node, slot });
    return;
  }
  if (Array.isArray(node)) node.forEach((v, i) => collect(v, { holder: node, key: i }, out));
  else for (const k of Object.keys(node)) collect((node as Record<string, unknown>)[k], { holder: node as Record<string, unknown>, key: k }, out);
}

/** Decodes every payload of `history` in place (codecs applied last to first) and returns it. */
export async function decodeHistory<T>(history: T, codecs: readonly PayloadCodec[]): Promise<T> {
  if (codecs.length === 0) return history;
  const found: { payload: Payload; slot: Slot }[] = [];
  collect(history, undefined, found);
  let payloads = found.map((f) => f.payload);
  for (const codec of [...codecs].reverse()) payloads = await codec.decode(payloads);
  found.forEach((f, i) => {
    (f.slot.holder as Record<string | number, unknown>)[f.slot.key] = payloads[i];
  });
  return history;
}
