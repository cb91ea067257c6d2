import { locationOf } from '../core/offers';
import type { CloudProvider, InstanceSpec, Json, Offer } from '../core/provider';

export interface CreateResult {
  instanceId: string;
  /** True when an instance with this VM's identity already existed at the location and was adopted. */
  adopted: boolean;
  /** `SHA256:…` of the worker key this create installed (absent in histories older than the field). */
  workerKeyFingerprint?: string;
}

/**
 * Never two instances for one VM at one location: observe first and adopt a live instance that
 * already carries the VM's identity (a create that timed out, a worker crash after the cloud
 * accepted; it is resumed, see `resumeCreate`), else create once with the attempt's
 * idempotency key.
 */
export async function createOrAdopt(provider: CloudProvider, offer: Offer, prepared: Json, spec: InstanceSpec): Promise<CreateResult> {
  const at = locationOf(offer);
  const existing = await provider.observe(at, spec.vmName);
  const live = existing.find((o) => o.status !== 'Terminating' && o.status !== 'Stopping' && o.status !== 'Failed');
  if (live) {
    // A create cut short before the instance was started (Docker's `created`) is finished here.
    await provider.resumeCreate?.(at, spec.vmName, live.id);
    return { instanceId: live.id, adopted: true };
  }
  // A create that erred yet left a failed instance (Vast.ai does this): delete it before trying
  // again, so that at most one instance carries the identity.
  const failed = existing.filter((o) => o.status === 'Failed').map((o) => o.id);
  if (failed.length > 0) await provider.delete(at, spec.vmName, failed);
  const instanceId = await provider.create(offer, prepared, spec);
  return { instanceId, adopted: false };
}
