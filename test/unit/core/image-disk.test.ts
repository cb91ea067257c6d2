import { describe, expect, it } from 'vitest';
import { imageDiskOf, imageDiskProblem } from '../../../src/core/image-disk';
import { CLOUD_TABLE } from '../../../src/core/clouds';

describe('image-disk: what --image and --disk-gb each cloud takes', () => {
  it('every example in the cloud table passes its own pattern', () => {
    for (const [cloud, s] of Object.entries(CLOUD_TABLE)) {
      if (s.image) expect(imageDiskProblem(cloud, s, { image: s.image.example }), cloud).toBeUndefined();
      if (s.diskGb) expect(imageDiskProblem(cloud, s, { diskGb: s.diskGb.min }), cloud).toBeUndefined();
    }
  });

  it.each([
    ['local', { image: 'x' }, '--image', /^local cannot use --image/],
    ['local', { diskGb: 50 }, '--disk-gb', /^local cannot use --disk-gb/],
    ['aws', { image: 'ubuntu' }, '--image', /is not an AMI id/],
    ['aws', { image: 'ami-123' }, '--image', /is not an AMI id/],
    ['gcp', { image: 'ubuntu-2204-lts' }, '--image', /is not an image family/],
    ['massedcompute', { image: 'ubuntu' }, '--image', /numeric image id/],
    ['aws', { diskGb: 4 }, '--disk-gb', /out of aws's range/],
    ['lambda', { image: 'lambda-stack-24-04', diskGb: 100 }, '--disk-gb', /^lambda cannot use --disk-gb/],
  ] as const)('%s %j → %s', (cloud, want, flag, message) => {
    const p = imageDiskProblem(cloud, imageDiskOf(cloud), want);
    expect(p?.flag).toBe(flag);
    expect(p?.message).toMatch(message);
    expect(p?.fix).toBeTruthy();
  });

  it('accepts the forms each cloud documents', () => {
    const ok = (cloud: string, image: string) => expect(imageDiskProblem(cloud, imageDiskOf(cloud), { image }), `${cloud} ${image}`).toBeUndefined();
    ok('aws', 'ami-0abc1234');
    ok('gcp', 'projects/deeplearning-platform-release/global/images/family/common-cu128-ubuntu-2204-nvidia-570');
    ok('gcp', 'https://www.googleapis.com/compute/v1/projects/ubuntu-os-cloud/global/images/ubuntu-2204-jammy-v20260110');
    ok('runpod', 'runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04');
    ok('vastai', 'ghcr.io/org/image@sha256:' + 'a'.repeat(64));
    ok('digitalocean', '123456');
    ok('lambda', '2f4c1a5e-8a44-4b0e-9a1e-0d9a0e6c1b2a');
  });

  it('capabilities absent (histories before the fields existed) mean neither flag', () => {
    expect(imageDiskProblem('old', {}, { image: 'x' })?.flag).toBe('--image');
    expect(imageDiskProblem('old', {}, {})).toBeUndefined();
  });
});
