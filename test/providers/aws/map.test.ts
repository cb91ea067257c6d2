/** Pure EC2 → Observed / Offer mapping. */
import { describe, expect, it } from 'vitest';
import { CATALOG } from '../../../src/providers/aws/catalog';
import { LIVE_STATES, STATE_TABLE, imageFamilyOf, observedOf, offerFor, type Ec2Instance } from '../../../src/providers/aws/map';

const running: Ec2Instance = {
  InstanceId: 'i-0abc',
  InstanceType: 'g5.xlarge',
  State: { Name: 'running' },
  PublicIpAddress: '54.1.2.3',
  PublicDnsName: 'ec2-54-1-2-3.compute-1.amazonaws.com',
  PrivateIpAddress: '172.31.0.9',
  Placement: { AvailabilityZone: 'us-east-1b' },
};

describe('aws map', () => {
  it('has the literal state table and filters on the live states only', () => {
    expect(STATE_TABLE).toEqual({
      pending: 'Pending',
      running: 'Running',
      stopping: 'Stopping',
      stopped: 'Stopped',
      'shutting-down': 'Terminating',
      terminated: 'gone',
    });
    expect(LIVE_STATES).toEqual(['pending', 'running', 'stopping', 'stopped', 'shutting-down']);
  });

  it('running with a public IP: endpoint ubuntu@ip:22 in the instance AZ', () => {
    expect(observedOf('aws', 'us-east-1', running, false)).toEqual({
      id: 'i-0abc',
      status: 'Running',
      instanceType: 'g5.xlarge',
      endpoint: { host: '54.1.2.3', port: 22, user: 'ubuntu' },
      location: { cloud: 'aws', region: 'us-east-1', zone: 'us-east-1b' },
    });
    expect(observedOf('aws', 'us-east-1', running, true)?.endpoint?.host).toBe('172.31.0.9');
    const dnsOnly = { ...running, PublicIpAddress: undefined };
    expect(observedOf('aws', 'us-east-1', dnsOnly, false)?.endpoint?.host).toBe('ec2-54-1-2-3.compute-1.amazonaws.com');
  });

  it('running before the public IP arrives has no endpoint yet; pending never has one', () => {
    const lag = { ...running, PublicIpAddress: undefined, PublicDnsName: '' };
    expect(observedOf('aws', 'us-east-1', lag, false)).toMatchObject({ status: 'Running' });
    expect(observedOf('aws', 'us-east-1', lag, false)?.endpoint).toBeUndefined();
    expect(observedOf('aws', 'us-east-1', { ...running, State: { Name: 'pending' } }, false)?.endpoint).toBeUndefined();
  });

  it('terminated is gone; shutting-down is Terminating with the reason; unknown states are Failed', () => {
    expect(observedOf('aws', 'us-east-1', { ...running, State: { Name: 'terminated' } }, false)).toBeUndefined();
    expect(
      observedOf('aws', 'us-east-1', { ...running, State: { Name: 'shutting-down' }, StateReason: { Message: 'Client.UserInitiatedShutdown' } }, false),
    ).toMatchObject({ status: 'Terminating', reason: 'Client.UserInitiatedShutdown' });
    expect(observedOf('aws', 'us-east-1', { ...running, State: { Name: 'exploded' } }, false)).toMatchObject({
      status: 'Failed',
      reason: 'unknown EC2 state "exploded"',
    });
  });

  it('catalog entries become offers carrying the image family and price date', () => {
    const h100 = CATALOG.find((e) => e.instanceType === 'p5.48xlarge')!;
    const o = offerFor('aws', 'us-west-2', h100);
    expect(o).toMatchObject({
      cloud: 'aws',
      region: 'us-west-2',
      instanceType: 'p5.48xlarge',
      gpu: { model: 'H100', count: 8, memoryGiB: 80 },
      currency: 'USD',
      spot: false,
    });
    expect(imageFamilyOf(o)).toBe('gpu');
    expect(
      imageFamilyOf(
        offerFor(
          'aws',
          'us-east-1',
          CATALOG.find((e) => e.instanceType === 't3.micro')!,
        ),
      ),
    ).toBe('cpu');
  });

  it('every catalog entry is coherent: a price with its date, GPU types use the GPU image', () => {
    for (const e of CATALOG) {
      expect(e.pricePerHour, e.instanceType).toBeGreaterThan(0);
      expect(e.priceDate, e.instanceType).toMatch(/^\d{4}-\d{2}/);
      expect(e.image, e.instanceType).toBe(e.gpuModel ? 'gpu' : 'cpu');
      expect(Boolean(e.gpuModel), e.instanceType).toBe(e.gpuCount > 0);
    }
    expect(new Set(CATALOG.map((e) => e.instanceType)).size).toBe(CATALOG.length);
  });
});
