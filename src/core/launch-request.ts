/**
 * The plan's request, derived from the VM's spec in one place: every request field of `VmSpec`
 * reaches `planOffers` whole, under its own name. Every `VmSpec` field is classified below; a new
 * field fails to compile until it is (and a request field that `ResourceRequest` lacks fails too),
 * so a field cannot be dropped silently.
 *
 * | `VmSpec` field                                                                        | in the plan's `ResourceRequest`       |
 * |---------------------------------------------------------------------------------------|---------------------------------------|
 * | `gpu`, `regions`, `instanceTypes`, `maxPricePerHour`, `image`, `diskGb`, `spot`, `reserved` (REQUEST_FIELDS) | the same field, when set |
 * | `name`, `k8s` (CONVERTED_FIELDS)                                                      | `vmName`; `k8s: spec.k8s === 'on'`    |
 * | `clouds`, `ttlMs`, `retryUntilUp`, `publicKeys`, `budgetUsd`, `parallel`, `recover`     | not a request field (LAUNCH_FIELDS)   |
 */
import type { VmSpec } from './api';
import type { ResourceRequest } from './provider';

/** Spec fields carried to the plan as they are. */
export const REQUEST_FIELDS = [
  'gpu',
  'regions',
  'instanceTypes',
  'maxPricePerHour',
  'image',
  'diskGb',
  'spot',
  'reserved',
] as const satisfies readonly (keyof VmSpec & keyof ResourceRequest)[];

/** Spec fields the request takes in another form. */
export const CONVERTED_FIELDS = ['name', 'k8s'] as const satisfies readonly (keyof VmSpec)[];

/** Spec fields of the launch and the VM's life, not of the request (`clouds` picks the adapters the plan asks). */
export const LAUNCH_FIELDS = ['clouds', 'ttlMs', 'retryUntilUp', 'publicKeys', 'budgetUsd', 'parallel', 'recover'] as const satisfies readonly (keyof VmSpec)[];

export type RequestField = (typeof REQUEST_FIELDS)[number];

type Unclassified = Exclude<keyof VmSpec, RequestField | (typeof CONVERTED_FIELDS)[number] | (typeof LAUNCH_FIELDS)[number]>;
/** Fails to compile when `VmSpec` has a field none of the lists above names. */
export const EVERY_SPEC_FIELD_CLASSIFIED: [Unclassified] extends [never] ? true : { unclassified: Unclassified } = true;

/** A carried field has the same type in the spec as in the request. */
type SameType = { [K in RequestField]: VmSpec[K] extends ResourceRequest[K] ? true : false }[RequestField];
/** Fails to compile when a carried field's spec type does not fit the request's. */
export const CARRIED_FIELDS_FIT: [SameType] extends [true] ? true : never = true;

/** The plan's request for `spec`: its request fields whole, its name and k3s wish converted. */
export function planRequestOf(spec: VmSpec): ResourceRequest {
  const carried: Partial<Pick<ResourceRequest, RequestField>> = {};
  for (const f of REQUEST_FIELDS) if (spec[f] !== undefined) Object.assign(carried, { [f]: spec[f] });
  return { vmName: spec.name, k8s: spec.k8s === 'on', ...carried };
}
