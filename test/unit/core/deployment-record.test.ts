import { describe, expect, it } from 'vitest';
import { decideClaim, deploymentRecordId, type DeploymentRecord } from '../../../src/core/deployment-record';

const record: DeploymentRecord = { deployment: 'dev-1a2b3c4d5e', keyFingerprint: 'SHA256:aaa', taskQueue: 'gpuprov', since: '2026-12-01T00:00:00.000Z' };

describe('decideClaim (the table in src/core/deployment-record.ts)', () => {
  it('no record: create; the same id and key: ok, whatever is open', () => {
    expect(decideClaim(undefined, { deployment: 'x', keyFingerprint: 'k' }, 3, false)).toEqual({ decision: 'create' });
    expect(decideClaim(record, { deployment: record.deployment, keyFingerprint: 'SHA256:aaa' }, 7, false)).toEqual({ decision: 'ok' });
  });

  it('another id: refused naming GPUPROV_DEPLOYMENT while VMs are open, replaced when none is', () => {
    const refused = decideClaim(record, { deployment: 'prod', keyFingerprint: 'SHA256:aaa' }, 2, false);
    expect(refused).toMatchObject({ decision: 'refuse', field: 'GPUPROV_DEPLOYMENT' });
    expect(refused.decision === 'refuse' && refused.fix).toContain(`GPUPROV_DEPLOYMENT=${record.deployment}`);
    expect(decideClaim(record, { deployment: 'prod', keyFingerprint: 'SHA256:aaa' }, 0, false)).toMatchObject({ decision: 'replace' });
  });

  it('another key: always refused naming GPUPROV_SSH_KEY_FILE, unless rotating with no VM open', () => {
    expect(decideClaim(record, { deployment: record.deployment, keyFingerprint: 'SHA256:bbb' }, 0, false)).toMatchObject({
      decision: 'refuse',
      field: 'GPUPROV_SSH_KEY_FILE',
    });
    expect(decideClaim(record, { deployment: record.deployment, keyFingerprint: 'SHA256:bbb' }, 1, true)).toMatchObject({
      decision: 'refuse',
      field: 'GPUPROV_SSH_KEY_FILE',
    });
    expect(decideClaim(record, { deployment: record.deployment, keyFingerprint: 'SHA256:bbb' }, 0, true)).toMatchObject({ decision: 'replace' });
  });

  it('one record per task queue', () => {
    expect(deploymentRecordId('gpuprov')).toBe('gpuprov-deployment:gpuprov');
  });
});
