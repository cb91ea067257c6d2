import { describe, expect, it } from 'vitest';
import { ProviderError, type BlockScope, type ErrorKind } from '../../src/core/errors';
import { classify, classifyOperation } from '../../src/providers/gcp/errors';
import { HTTP_ERRORS, OPERATION_ERRORS, httpError, type HttpErrorBody } from '../fixtures/gcp/bodies';

/** What the SDK (google-gax REST over gaxios) throws for a non-2xx answer. */
function sdkError(status: number, body: HttpErrorBody, headers: Record<string, string> = {}): Error {
  return Object.assign(new Error(JSON.stringify(body)), {
    name: 'GaxiosError',
    status,
    code: status,
    config: { headers: { Authorization: 'Bearer ya29.SECRET-TOKEN' } },
    response: { status, headers: new Headers(headers) },
  });
}

const P = 'gpuprov-test';
const Z = 'us-central1-a';

const httpCases: [string, Error, ErrorKind, BlockScope | undefined][] = [
  ['401 authError', sdkError(401, HTTP_ERRORS.unauthenticated()), 'Credentials', undefined],
  ['403 forbidden', sdkError(403, HTTP_ERRORS.forbidden()), 'Credentials', undefined],
  ['403 IAM_PERMISSION_DENIED', sdkError(403, HTTP_ERRORS.iamDenied()), 'Credentials', undefined],
  ['403 PERMISSIONS_ERROR', sdkError(403, HTTP_ERRORS.permissionsError()), 'Credentials', undefined],
  ['403 rateLimitExceeded', sdkError(403, HTTP_ERRORS.rateLimit403()), 'Transient', undefined],
  ['429 rateLimitExceeded', sdkError(429, HTTP_ERRORS.rateLimit429()), 'Transient', undefined],
  ['403 quotaExceeded regional', sdkError(403, HTTP_ERRORS.quotaExceeded()), 'Quota', 'region'],
  ['403 quotaExceeded GPUS_ALL_REGIONS', sdkError(403, HTTP_ERRORS.quotaExceededGlobal()), 'Quota', 'cloud'],
  ['503 backendError', sdkError(503, HTTP_ERRORS.backendError()), 'Transient', undefined],
  ['500 backendError', sdkError(500, HTTP_ERRORS.internalError()), 'Transient', undefined],
  ['500 SERVICE_UNAVAILABLE_FOR_LOCATION', sdkError(500, HTTP_ERRORS.serviceUnavailableForLocation()), 'Transient', undefined],
  ['503 insufficientCapacity (bulk)', sdkError(503, HTTP_ERRORS.insufficientCapacity()), 'Capacity', 'zone'],
  [
    '503 ZONE_RESOURCE_POOL_EXHAUSTED (sync)',
    sdkError(503, httpError(503, 'ZONE_RESOURCE_POOL_EXHAUSTED', OPERATION_ERRORS.exhausted(P, Z).message)),
    'Capacity',
    'zone',
  ],
  ['403 QUOTA_EXCEEDED (sync)', sdkError(403, httpError(403, 'QUOTA_EXCEEDED', OPERATION_ERRORS.quota(P, Z).message)), 'Quota', 'region'],
  ['404 machineTypes not found', sdkError(404, HTTP_ERRORS.notFound(`projects/${P}/zones/${Z}/machineTypes/a3-highgpu-8g`)), 'Unavailable', undefined],
  ['404 acceleratorTypes not found', sdkError(404, HTTP_ERRORS.notFound(`projects/${P}/zones/${Z}/acceleratorTypes/nvidia-l4`)), 'Unavailable', undefined],
  ['404 Location not found', sdkError(404, HTTP_ERRORS.locationNotFound('us-east9-z')), 'Unavailable', 'zone'],
  ['400 invalid', sdkError(400, HTTP_ERRORS.invalidField('resource.name')), 'InvalidRequest', undefined],
  ['400 INVALID_FIELD_VALUE', sdkError(400, HTTP_ERRORS.invalidFieldValue('requestId')), 'InvalidRequest', undefined],
  ['400 MISSING_REQUIRED_FIELD', sdkError(400, HTTP_ERRORS.missingField('resource.disks')), 'InvalidRequest', undefined],
  ['400 RESOURCE_ALREADY_EXISTS', sdkError(400, HTTP_ERRORS.resourceAlreadyExists('x')), 'InvalidRequest', undefined],
  ['409 alreadyExists', sdkError(409, HTTP_ERRORS.alreadyExists('x')), 'InvalidRequest', undefined],
  ['400 resourceNotReady', sdkError(400, HTTP_ERRORS.resourceNotReady('x')), 'Transient', undefined],
];

const opCases: [keyof typeof OPERATION_ERRORS, ErrorKind, BlockScope | undefined][] = [
  ['exhausted', 'Capacity', 'zone'],
  ['exhaustedWithDetails', 'Capacity', 'zone'],
  ['unsupported', 'Capacity', 'zone'],
  ['opRate', 'Capacity', 'zone'],
  ['serviceUnavailable', 'Capacity', 'zone'],
  ['quota', 'Quota', 'region'],
  ['quotaGlobal', 'Quota', 'cloud'],
  ['notFound', 'Unavailable', 'offer'],
  ['permissions', 'Credentials', undefined],
  ['iamDenied', 'Credentials', undefined],
  ['invalidField', 'InvalidRequest', undefined],
  ['missingField', 'InvalidRequest', undefined],
  ['alreadyExists', 'InvalidRequest', undefined],
];

describe('gcp classify: synchronous HTTP errors', () => {
  it.each(httpCases)('%s', (_name, err, kind, block) => {
    const e = classify(err);
    expect(e).toBeInstanceOf(ProviderError);
    expect(e.kind).toBe(kind);
    expect(e.block).toBe(block);
    expect(e.message).not.toContain('SECRET');
    expect(e.cause).toBeUndefined();
  });

  it('reads Retry-After (seconds) from the response', () => {
    expect(classify(sdkError(429, HTTP_ERRORS.rateLimit429(), { 'retry-after': '30' })).retryAfterMs).toBe(30_000);
    expect(classify(sdkError(429, HTTP_ERRORS.rateLimit429())).retryAfterMs).toBeUndefined();
  });

  it('keeps the vendor reason as the code', () => {
    expect(classify(sdkError(403, HTTP_ERRORS.quotaExceeded())).code).toBe('403 quotaExceeded');
  });

  it('network failures are Transient, missing ADC is Credentials, anything else Failed', () => {
    expect(classify(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' })).kind).toBe('Transient');
    const adc = classify(
      new Error('Could not load the default credentials. Browse to https://cloud.google.com/docs/authentication/getting-started for more information.'),
    );
    expect(adc.kind).toBe('Credentials');
    expect(adc.message).toMatch(/GOOGLE_APPLICATION_CREDENTIALS/);
    expect(classify(new Error('something odd')).kind).toBe('Failed');
    expect(classify(Object.assign(new Error('14 UNAVAILABLE: x'), { code: 14 })).kind).toBe('Transient');
  });
});

describe('gcp classify: operation errors', () => {
  it.each(opCases)('%s', (name, kind, block) => {
    const e = classifyOperation([OPERATION_ERRORS[name](P, Z)]);
    expect(e.kind).toBe(kind);
    expect(e.block).toBe(block);
    expect(e.code).toBe(OPERATION_ERRORS[name](P, Z).code);
  });

  it('falls back to the capacity messages only for unknown codes, else Failed', () => {
    expect(
      classifyOperation([
        { code: 'SOMETHING_NEW', message: `The zone 'projects/${P}/zones/${Z}' does not have enough resources available to fulfill the request.` },
      ]),
    ).toMatchObject({ kind: 'Capacity', block: 'zone' });
    expect(classifyOperation([{ code: 'SOMETHING_NEW', message: `A g2-standard-4 VM instance is currently unavailable in the ${Z} zone.` }])).toMatchObject({
      kind: 'Capacity',
      block: 'zone',
    });
    expect(classifyOperation([{ code: 'SOMETHING_NEW', message: 'disk broke' }]).kind).toBe('Failed');
    expect(classifyOperation([]).kind).toBe('Failed');
  });

  it('the first known code wins over unknown ones', () => {
    expect(classifyOperation([{ code: 'X', message: 'x' }, OPERATION_ERRORS.quota(P, Z)]).kind).toBe('Quota');
  });
});
