/** The create key: how adapters write a create's idempotency key on what it made, and report it back (`Observed.createKey`). */
import { createHash } from 'node:crypto';

/** sha256 (hex) of the idempotency key: short enough for a tag value, and no launch detail in the clear. */
export function createKeyOf(idempotencyKey: string): string {
  return createHash('sha256').update(idempotencyKey, 'utf8').digest('hex');
}
