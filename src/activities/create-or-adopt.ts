import { locationOf } from '../core/offers';
import { ProviderError } from '../core/errors';
import type { CloudProvider, InstanceSpec, Json, Observed, Offer } from '../core/provider';
import { createKeyOf } from '../providers/create-key';

export interface CreateResult {
  instanceId: string;
  /** True when an instance with this VM's identity already existed at the location and was adopted. */
  adopted: boolean;
  /** `SHA256:…` of the worker key this create installed (absent in histories older than the field). */
  workerKeyFingerprint?: string;
}

/**
 * Whether a live instance found under this VM's identity is this create's own (a retry after a
 * lost response or a crash after the cloud accepted): it carries this attempt's create key, or
 * the cloud keeps no key on instances (then the deployment id, unique per install, is the evidence).
 */
function madeByThisCreate(o: Observed, spec: InstanceSpec): boolean {
  return o.createKey === undefined || o.createKey === createKeyOf(spec.idempotencyKey);
}

/** What the cloud holds of this VM at the offer's location before anything is made. */
export interface Found {
  /** A live instance this very create made (a retry after a lost response or a crash): adopt it. */
  own?: string;
  /** Failed instances this create made: deleted before the create. */
  failed: string[];
}

/**
 * Before prepare: observe the VM's identity at the offer's location. A live instance of the same
 * name and deployment made by another create (another install with the same deployment id, a
 * launch from before) is never adopted: an InvalidRequest names it before anything is made
 * (adopting it would hang on a key it does not hold, and a teardown would delete someone else's machine).
 */
export async function findExisting(provider: CloudProvider, offer: Offer, spec: InstanceSpec): Promise<Found> {
  const at = locationOf(offer);
  const existing = await provider.observe(at, spec.vmName);
  const live = existing.filter((o) => o.status !== 'Terminating' && o.status !== 'Stopping' && o.status !== 'Failed' && !spec.besides?.includes(o.id));
  const own = live.find((o) => madeByThisCreate(o, spec));
  if (!own && live.length > 0) {
    const ids = live.map((o) => o.id).join(', ');
    throw new ProviderError(
      'InvalidRequest',
      `an instance named ${spec.vmName} (${ids}) already runs at ${at.cloud}/${at.region} with this deployment's tag (${spec.owner}), made by another launch: it is not adopted. ` +
        `Pick another --name; if it is yours and nobody uses it: npx provision sweep --dry-run (then sweep, or sweep --include-unknown ${spec.vmName} when it is listed unknown)`,
      { code: 'NameTaken' },
    );
  }
  const failed = existing.filter((o) => o.status === 'Failed' && madeByThisCreate(o, spec)).map((o) => o.id);
  return own ? { own: own.id, failed } : { failed };
}

/**
 * Never two instances for one VM at one location: adopt the live instance {@link findExisting}
 * found (`seen`, else it looks now) that this create made (resuming it, see `resumeCreate`), else create once with the attempt's idempotency key. A create
 * that erred yet left a failed instance (Vast.ai does this) has it deleted first, so at most one
 * instance carries the identity.
 */
export async function createOrAdopt(provider: CloudProvider, offer: Offer, prepared: Json, spec: InstanceSpec, seen?: Found): Promise<CreateResult> {
  const found = seen ?? (await findExisting(provider, offer, spec));
  if (found.own) {
    // A create cut short before the instance was started (Docker's `created`) is finished here.
    await provider.resumeCreate?.(locationOf(offer), spec.vmName, found.own);
    return { instanceId: found.own, adopted: true };
  }
  if (found.failed.length > 0) await provider.delete(locationOf(offer), spec.vmName, found.failed);
  const instanceId = await provider.create(offer, prepared, spec);
  return { instanceId, adopted: false };
}
