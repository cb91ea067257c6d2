import { ProviderError, type BlockScope, type ErrorKind } from '../../core/errors';

/**
 * EC2 error codes (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/errors-overview.html)
 * → kind and block scope. SDK v3 throws an
 * `EC2ServiceException` whose `name` is the EC2 code and whose `$metadata.httpStatusCode`
 * is the HTTP status.
 *
 * Scopes: Quota blocks the whole region (EC2 vCPU quotas are per region and family class);
 * `Unsupported` ("the AZ currently has constraints on that instance type") blocks the type in
 * the region, because offers are regional and `create` has already tried every AZ's subnet
 * before the error leaves the adapter. Capacity keeps the default (the offer = type in region).
 *
 * Spot (same page): InsufficientInstanceCapacity on a spot create is the AZ's spot pool out of
 * capacity; UnfulfillableCapacity "isn't enough spare capacity to fulfill your request for Spot
 * Instances"; SpotMaxPriceTooLow "the request's maximum price is less than the minimum required
 * Spot price" (gpuprov sends no MaxPrice, so the cap is the on-demand price: the price is too
 * low for the market now). All three are Capacity, and a spot create scopes them to the spot offer
 * (`spotScoped`, ./spot.ts). MaxSpotInstanceCountExceeded ("the limit on the number of Spot
 * Instances that you can launch") is the spot quota: Quota, region.
 *
 * Reserved capacity (same page; ./reserved.ts): a targeted launch into a full reservation
 * (ReservationCapacityExceeded), one gone (InvalidCapacityReservationId.NotFound), an invalid
 * target (InvalidLaunchTargets) or a block not started yet
 * (InvalidCapacityReservationState.PendingActivation) is Capacity, which a reserved create scopes
 * to its offer (`reservedScoped`). A block offering no longer sold
 * (InvalidCapacityBlockOfferingIdExpired, ...NotFound) is the purchase refused: Capacity.
 * CapacityBlockDescribeLimitExceeded ("you've reached the limit for this account") is a limit on
 * describing offerings: Transient. A malformed reservation or offering id is InvalidRequest.
 */
export const CODE_TABLE: Readonly<Record<string, { kind: ErrorKind; block?: BlockScope }>> = {
  InsufficientInstanceCapacity: { kind: 'Capacity' },
  InsufficientHostCapacity: { kind: 'Capacity' },
  InsufficientReservedInstanceCapacity: { kind: 'Capacity' },
  InsufficientCapacity: { kind: 'Capacity' },
  InsufficientAddressCapacity: { kind: 'Capacity' },
  UnfulfillableCapacity: { kind: 'Capacity' },
  SpotMaxPriceTooLow: { kind: 'Capacity' },
  ReservationCapacityExceeded: { kind: 'Capacity' },
  'InvalidCapacityReservationId.NotFound': { kind: 'Capacity' },
  InvalidLaunchTargets: { kind: 'Capacity' },
  'InvalidCapacityReservationState.PendingActivation': { kind: 'Capacity' },
  InvalidCapacityBlockOfferingIdExpired: { kind: 'Capacity' },
  InvalidCapacityBlockOfferingIdNotFound: { kind: 'Capacity' },

  VcpuLimitExceeded: { kind: 'Quota', block: 'region' },
  InstanceLimitExceeded: { kind: 'Quota', block: 'region' },
  MaxSpotInstanceCountExceeded: { kind: 'Quota', block: 'region' },
  VolumeLimitExceeded: { kind: 'Quota', block: 'region' },
  MaxIOPSLimitExceeded: { kind: 'Quota', block: 'region' },

  Unsupported: { kind: 'Unavailable', block: 'type-in-region' },

  AuthFailure: { kind: 'Credentials' },
  InvalidClientTokenId: { kind: 'Credentials' },
  UnauthorizedOperation: { kind: 'Credentials' },
  RequestExpired: { kind: 'Credentials' },
  Blocked: { kind: 'Credentials' },
  OptInRequired: { kind: 'Credentials' },
  PendingVerification: { kind: 'Credentials' },
  // The same meaning: bad/expired keys, and the SDK's own "no credentials found".
  SignatureDoesNotMatch: { kind: 'Credentials' },
  ExpiredToken: { kind: 'Credentials' },
  CredentialsProviderError: { kind: 'Credentials' },

  RequestLimitExceeded: { kind: 'Transient' },
  InternalError: { kind: 'Transient' },
  Unavailable: { kind: 'Transient' },
  ServiceUnavailable: { kind: 'Transient' },
  CapacityBlockDescribeLimitExceeded: { kind: 'Transient' },
  // Eventual consistency: briefly returned right after create. `delete` treats it as success.
  'InvalidInstanceID.NotFound': { kind: 'Transient' },
  // Security group still referenced by a terminating instance; `cleanup` retries later.
  DependencyViolation: { kind: 'Transient' },
  // Two prepares raced on the group name; the next attempt finds the group.
  'InvalidGroup.Duplicate': { kind: 'Transient' },

  IdempotentParameterMismatch: { kind: 'InvalidRequest' },
  MissingParameter: { kind: 'InvalidRequest' },
  InvalidParameter: { kind: 'InvalidRequest' },
  InvalidParameterCombination: { kind: 'InvalidRequest' },
  InvalidParameterValue: { kind: 'InvalidRequest' },
  'InvalidCapacityReservationId.Malformed': { kind: 'InvalidRequest' },
  InvalidCapacityBlockOfferingIdMalformed: { kind: 'InvalidRequest' },
};

const CREDENTIAL_HINT = 'set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE';

interface SdkErrorShape {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  $metadata?: { httpStatusCode?: unknown };
}

function kindFor(code: string, message: string): { kind: ErrorKind; block?: BlockScope } | undefined {
  // EC2 uses InvalidParameterValue for bad values of any field; only the message says that the
  // field was InstanceType (a type this account/region does not know), the one case that is
  // "not offered" rather than a bug in the request.
  if (code === 'InvalidParameterValue' && /InstanceType|instance type/i.test(message)) {
    return { kind: 'Unavailable', block: 'type-in-region' };
  }
  const hit = CODE_TABLE[code];
  if (hit) return hit;
  if (code.startsWith('InvalidParameter')) return { kind: 'InvalidRequest' };
  return undefined;
}

/**
 * Map anything an EC2 call threw to a {@link ProviderError}; `what` names the operation.
 * Codes first (InsufficientInstanceCapacity comes back as HTTP 500, so status alone would
 * say Transient), then the HTTP status, then network failures (Transient).
 */
export function classify(err: unknown, what: string): ProviderError {
  if (err instanceof ProviderError) return err;
  const e = (typeof err === 'object' && err !== null ? err : {}) as SdkErrorShape;
  const code = typeof e.name === 'string' ? e.name : 'Error';
  const message = typeof e.message === 'string' ? e.message : String(err);
  const status = typeof e.$metadata?.httpStatusCode === 'number' ? e.$metadata.httpStatusCode : undefined;
  const hit = kindFor(code, message);

  if (hit?.kind === 'Credentials' || (!hit && (status === 401 || status === 403))) {
    // The vendor text can echo the access key id or the canonical request: keep only the code.
    return new ProviderError('Credentials', `AWS ${what}: credentials rejected (${code}); ${CREDENTIAL_HINT}`, { code, cause: err });
  }
  const text = `AWS ${what}: ${code}: ${message}`;
  if (hit) return new ProviderError(hit.kind, text, { code, ...(hit.block ? { block: hit.block } : {}), cause: err });
  if (status === 429 || (status !== undefined && status >= 500)) return new ProviderError('Transient', text, { code, cause: err });
  if (status !== undefined && status >= 400) return new ProviderError('Failed', text, { code, cause: err });
  // No HTTP status: the request never got an answer (connection refused, reset, timeout).
  return new ProviderError('Transient', `AWS ${what}: ${code}: ${message}`, { code, cause: err });
}
