/**
 * The workflow patch ids in use, each dated. A patch guards a change of the commands a workflow
 * issues, so that histories recorded before it still replay; workflow code asks for one only
 * through `patchedSince` (src/workflows/patch.ts), which takes only ids of this table.
 *
 * | field         | meaning                                                                       |
 * |---------------|-------------------------------------------------------------------------------|
 * | key           | the id recorded in the marker (`gpuprov-<what>-v<n>`); never reused           |
 * | `arrived`     | ISO date the patch was merged                                                 |
 * | `retireAfter` | ISO date after which no open run can predate it; after it the old branch goes |
 * | `why`         | the change of commands the patch guards                                       |
 *
 * test/replay/patch-policy.test.ts fails when a date is invalid, when `retireAfter` is past (the
 * patch is due to be retired: keep the new branch, delete the old one and the entry), or when
 * the saved histories do not replay both branches of an id. docs/ARCHITECTURE.md, "Patches".
 */
export interface PatchEntry {
  /** ISO date (YYYY-MM-DD) the patch arrived. */
  arrived: string;
  /** ISO date (YYYY-MM-DD) after which the patch must be retired; later than `arrived`. */
  retireAfter: string;
  /** The command change the patch guards. */
  why: string;
}

/** Every patch id workflow code may ask for. Empty: nothing released predates the current commands. */
export const PATCHES = {} satisfies Record<string, PatchEntry>;

/** A patch id of {@link PATCHES}. */
export type PatchId = keyof typeof PATCHES;
