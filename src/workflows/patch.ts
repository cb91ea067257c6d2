/**
 * The one door to Temporal's `patched()`: workflow code asks `patchedSince(id)` with an id of
 * src/core/patches.ts's dated table (lint forbids `patched`/`deprecatePatch` elsewhere).
 */
import { patched } from '@temporalio/workflow';
import type { PatchId } from '../core/patches';

/** True when this run takes the patch's new branch (a new run, or a history recorded with the patch's marker). */
export function patchedSince(id: PatchId): boolean {
  return patched(id);
}
