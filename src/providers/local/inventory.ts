/**
 * The local cloud's `inventory`: every instance of one deployment in one region, read in one
 * pass over the state directory (the local "list call"). Instances whose labels name another
 * owner are never returned.
 */
import type { Location, Owned } from '../../core/provider';
import type { LocalApi } from './api';
import { toObserved } from './map';

export async function localInventory(api: LocalApi, at: Location, deployment: string, user: string): Promise<Owned[]> {
  const mine = (await api.list()).filter((x) => x.labels.owner === deployment && x.labels.region === at.region);
  return Promise.all(mine.map(async (x) => ({ ...toObserved(await api.record(x.id, x.labels), user), vmName: x.labels.vmName })));
}
