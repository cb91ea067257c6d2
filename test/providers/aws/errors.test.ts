/** Classification of every EC2 error code the adapter maps (src/providers/aws/errors.ts; codes from https://docs.aws.amazon.com/AWSEC2/latest/APIReference/errors-overview.html), pure, no moto. */
import { EC2ServiceException } from '@aws-sdk/client-ec2';
import { describe, expect, it } from 'vitest';
import { classify } from '../../../src/providers/aws/errors';
import { EC2_ERRORS, UNKNOWN_TYPE, type Ec2ErrorFixture } from '../../fixtures/aws/errors';

/** The codes the adapter's table maps, kind by kind (InvalidParameter* stands for the three concrete ones). */
const CODES_BY_KIND: Record<string, string[]> = {
  Capacity: [
    'InsufficientInstanceCapacity',
    'InsufficientHostCapacity',
    'InsufficientReservedInstanceCapacity',
    'InsufficientCapacity',
    'InsufficientAddressCapacity',
    'UnfulfillableCapacity',
    'SpotMaxPriceTooLow',
    'ReservationCapacityExceeded',
    'InvalidCapacityReservationId.NotFound',
    'InvalidLaunchTargets',
    'InvalidCapacityReservationState.PendingActivation',
    'InvalidCapacityBlockOfferingIdExpired',
    'InvalidCapacityBlockOfferingIdNotFound',
  ],
  Quota: ['VcpuLimitExceeded', 'InstanceLimitExceeded', 'MaxSpotInstanceCountExceeded', 'VolumeLimitExceeded', 'MaxIOPSLimitExceeded'],
  Unavailable: ['Unsupported'],
  Credentials: ['AuthFailure', 'InvalidClientTokenId', 'UnauthorizedOperation', 'RequestExpired', 'Blocked', 'OptInRequired', 'PendingVerification'],
  Transient: ['RequestLimitExceeded', 'InternalError', 'Unavailable', 'InvalidInstanceID.NotFound', 'CapacityBlockDescribeLimitExceeded'],
  InvalidRequest: [
    'IdempotentParameterMismatch',
    'InvalidParameter',
    'InvalidParameterCombination',
    'InvalidParameterValue',
    'MissingParameter',
    'InvalidCapacityReservationId.Malformed',
    'InvalidCapacityBlockOfferingIdMalformed',
  ],
};

function sdkError(f: Pick<Ec2ErrorFixture, 'code' | 'status' | 'message'>): EC2ServiceException {
  return new EC2ServiceException({ name: f.code, $fault: f.status >= 500 ? 'server' : 'client', $metadata: { httpStatusCode: f.status }, message: f.message });
}

describe('aws classify', () => {
  it('the fixture table covers every mapped code with the kind the table gives', () => {
    for (const [kind, codes] of Object.entries(CODES_BY_KIND)) {
      for (const code of codes) expect(EC2_ERRORS.find((f) => f.code === code)?.kind, code).toBe(kind);
    }
  });

  it.each(EC2_ERRORS.map((f) => [f.code, f] as const))('%s → its kind and block', (_code, f) => {
    const err = classify(sdkError(f), 'RunInstances');
    expect(err.kind).toBe(f.kind);
    expect(err.block).toBe(f.block);
    expect(err.code).toBe(f.code);
  });

  it('InvalidParameterValue naming InstanceType is "not offered", other values are bad requests', () => {
    const t = classify(sdkError(UNKNOWN_TYPE), 'RunInstances');
    expect([t.kind, t.block]).toEqual(['Unavailable', 'type-in-region']);
    expect(classify(sdkError({ code: 'InvalidParameterValue', status: 400, message: 'Value () for parameter groupId is invalid.' }), 'x').kind).toBe(
      'InvalidRequest',
    );
    expect(classify(sdkError({ code: 'InvalidParameterFoo', status: 400, message: 'm' }), 'x').kind).toBe('InvalidRequest');
  });

  it('unknown codes fall back on the HTTP status; no status is a network failure', () => {
    expect(classify(sdkError({ code: 'SomethingNew', status: 503, message: 'm' }), 'x').kind).toBe('Transient');
    expect(classify(sdkError({ code: 'SomethingNew', status: 429, message: 'm' }), 'x').kind).toBe('Transient');
    expect(classify(sdkError({ code: 'SomethingNew', status: 403, message: 'm' }), 'x').kind).toBe('Credentials');
    expect(classify(sdkError({ code: 'SomethingNew', status: 400, message: 'm' }), 'x').kind).toBe('Failed');
    expect(classify(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }), 'x').kind).toBe('Transient');
  });

  it('codes win over statuses: InsufficientInstanceCapacity is HTTP 500 but Capacity', () => {
    expect(classify(sdkError({ code: 'InsufficientInstanceCapacity', status: 500, message: 'm' }), 'x').kind).toBe('Capacity');
  });

  it('credential errors never repeat the vendor text (it can echo key ids or the signed request)', () => {
    const secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
    const err = classify(
      sdkError({ code: 'SignatureDoesNotMatch', status: 403, message: `The request signature we calculated does not match. Key ${secret}` }),
      'DescribeInstances',
    );
    expect(err.kind).toBe('Credentials');
    expect(err.message).not.toContain(secret);
    expect(err.message).toContain('AWS_ACCESS_KEY_ID');
  });
});
