/**
 * The delete loop of clouds without a bulk delete: one call per id, each id once, an answer that
 * says the instance is already gone counts as success (delete is idempotent by contract).
 */
export async function deleteEach(
  ids: Iterable<string>,
  del: (id: string) => Promise<unknown>,
  alreadyGone: (err: unknown) => boolean = () => false,
): Promise<void> {
  for (const id of new Set(ids)) {
    try {
      await del(id);
    } catch (err) {
      if (!alreadyGone(err)) throw err;
    }
  }
}
