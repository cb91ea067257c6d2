/**
 * One SshError → one failure type, in every activity that uses SSH (launch probe, k3s, fleet
 * bootstrap), against a real OpenSSH sshd on 127.0.0.1: another host key than the pinned one is
 * HostKeyMismatch (never retried), a refused key SshAuthFailed, a refused port SshNotReady.
 */
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities, type Activities } from '../../../src/activities';
import type { BootstrapTarget } from '../../../src/activities/bootstrap';
import type { K3sTarget } from '../../../src/activities/k3s';
import { FAILURE_TYPES, NON_RETRYABLE_TYPES, type FailureType } from '../../../src/core/failures';
import { kindOfFailureType } from '../../../src/core/search';
import { ProviderRegistry } from '../../../src/providers/registry';
import { ProbeCommandError, SshError, sshFailure, withSsh, type SshErrorReason, type SshIdentity, type SshProber } from '../../../src/ssh';
import { describeWithSshd, startTestHost, type TestHost } from './host';

async function failureOf(p: Promise<unknown>): Promise<{ type: string | undefined; nonRetryable: boolean }> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApplicationFailure);
  const f = err as ApplicationFailure;
  return { type: f.type ?? undefined, nonRetryable: f.nonRetryable === true };
}

const EXPECTED: Record<SshErrorReason, { type: FailureType; nonRetryable: boolean }> = {
  unreachable: { type: FAILURE_TYPES.SshNotReady, nonRetryable: false },
  auth: { type: FAILURE_TYPES.SshAuthFailed, nonRetryable: false },
  'host-key-mismatch': { type: FAILURE_TYPES.HostKeyMismatch, nonRetryable: true },
  'worker-key-mismatch': { type: FAILURE_TYPES.WorkerKeyMismatch, nonRetryable: true },
};

describe('sshFailure', () => {
  it('maps each reason to one failure type; only a host-key or worker-key mismatch is final', () => {
    for (const [reason, want] of Object.entries(EXPECTED) as [SshErrorReason, (typeof EXPECTED)[SshErrorReason]][]) {
      const f = sshFailure(new SshError(reason, `x: ${reason}`));
      expect({ type: f.type, nonRetryable: f.nonRetryable, details: f.details }).toEqual({ ...want, details: [{ kind: 'Failed' }] });
      expect(NON_RETRYABLE_TYPES.includes(want.type)).toBe(want.nonRetryable);
      // The launch counts each as a failed attempt (the failover moves on), except a worker-key
      // mismatch: another offer cannot fix the deployment's keys, so the launch ends.
      expect(kindOfFailureType(want.type)).toBe(reason === 'worker-key-mismatch' ? 'Credentials' : 'Failed');
    }
  });
});

describeWithSshd('SSH failures in the activities (real sshd)', () => {
  let h: TestHost;
  const acts = (o: { ssh?: SshIdentity; prober?: SshProber } = {}): Activities =>
    createActivities({
      registry: new ProviderRegistry([h.cloud.provider]),
      ssh: o.ssh ?? h.identity,
      owner: 'ssh-unit',
      inlineWindowMs: 0,
      ...(o.prober ? { prober: o.prober } : {}),
    });
  const endpoint = (port = h.target.port) => ({ host: h.target.host, port, user: h.target.user });
  const k3s = (o: { hostKey?: string; port?: number } = {}): K3sTarget => ({
    endpoint: endpoint(o.port),
    defaultUser: 'root',
    hostKey: o.hostKey ?? h.hostKey,
  });
  const node = (o: { hostKey?: string; port?: number } = {}): BootstrapTarget => ({
    endpoint: endpoint(o.port),
    hostKey: o.hostKey ?? h.hostKey,
    node: { fleet: 'f', group: 'g', index: 0, role: 'worker', node: 'f-g-0' },
    spec: { verify: ['true'], start: 'sleep 1', ready: { command: 'true' }, timeout: 60, dir: '.gpuprov-ssh-unit' },
  });

  beforeAll(async () => {
    h = await startTestHost('ssh-failures');
  });
  afterAll(async () => {
    await h?.close();
  });

  describe('launch probe', () => {
    it('answers with the host key it saw', async () => {
      expect(await acts().probeSsh({ endpoint: endpoint(), defaultUser: 'root' })).toEqual({
        hostKey: h.hostKey,
        fingerprint: expect.stringMatching(/^SHA256:/),
      });
    });
    it('a pinned key the host does not have: HostKeyMismatch, final', async () => {
      const pinning: SshProber = (t, id) => withSsh({ ...t, hostKey: h.otherHostKey }, id, async (s) => ({ fingerprint: s.fingerprint, hostKey: s.hostKey }));
      expect(await failureOf(acts({ prober: pinning }).probeSsh({ endpoint: endpoint(), defaultUser: 'root' }))).toEqual(EXPECTED['host-key-mismatch']);
    });
    it('a refused key: SshAuthFailed, retryable', async () => {
      expect(await failureOf(acts({ ssh: h.stranger }).probeSsh({ endpoint: endpoint(), defaultUser: 'root' }))).toEqual(EXPECTED.auth);
    });
    it('a refused port: SshNotReady, retryable', async () => {
      expect(await failureOf(acts().probeSsh({ endpoint: endpoint(h.refusedPort), defaultUser: 'root' }))).toEqual(EXPECTED.unreachable);
    });
    it('a probe command that fails: CommandFailed, final (not an SSH failure)', async () => {
      const failing: SshProber = async () => Promise.reject(new ProbeCommandError('probe command exited 1'));
      expect(await failureOf(acts({ prober: failing }).probeSsh({ endpoint: endpoint(), defaultUser: 'root' }))).toEqual({
        type: FAILURE_TYPES.CommandFailed,
        nonRetryable: true,
      });
    });
  });

  describe('k3s', () => {
    it('another host key than the pinned one: HostKeyMismatch, final', async () => {
      expect(await failureOf(acts().readBootProbe(k3s({ hostKey: h.otherHostKey })))).toEqual(EXPECTED['host-key-mismatch']);
    });
    it('a refused key: SshAuthFailed, retryable', async () => {
      expect(await failureOf(acts({ ssh: h.stranger }).readBootProbe(k3s()))).toEqual(EXPECTED.auth);
    });
    it('a refused port: SshNotReady, retryable', async () => {
      expect(await failureOf(acts().awaitApi(k3s({ port: h.refusedPort })))).toEqual(EXPECTED.unreachable);
    });
  });

  describe('fleet bootstrap', () => {
    it('another host key than the pinned one: HostKeyMismatch, final', async () => {
      expect(await failureOf(acts().bootstrapVerify(node({ hostKey: h.otherHostKey })))).toEqual(EXPECTED['host-key-mismatch']);
      expect(await failureOf(acts().bootstrapAwaitReady(node({ hostKey: h.otherHostKey })))).toEqual(EXPECTED['host-key-mismatch']);
    });
    it('a refused key: SshAuthFailed, retryable', async () => {
      expect(await failureOf(acts({ ssh: h.stranger }).bootstrapStart(node()))).toEqual(EXPECTED.auth);
    });
    it('a refused port: SshNotReady, retryable', async () => {
      expect(await failureOf(acts().bootstrapVerify(node({ port: h.refusedPort })))).toEqual(EXPECTED.unreachable);
    });
    it('stop gives up on an unreachable node from the third attempt, but never on a host-key mismatch', async () => {
      const quiet = { logger: new DefaultLogger('ERROR') };
      const third = new MockActivityEnvironment({ attempt: 3 }, quiet);
      expect(await third.run((t: BootstrapTarget) => acts().bootstrapStop(t), node({ port: h.refusedPort }))).toMatchObject({
        stage: 'stopped',
        detail: 'unreachable',
      });
      expect(await failureOf(third.run((t: BootstrapTarget) => acts().bootstrapStop(t), node({ hostKey: h.otherHostKey })))).toEqual(
        EXPECTED['host-key-mismatch'],
      );
      expect(
        await failureOf(new MockActivityEnvironment({ attempt: 1 }, quiet).run((t: BootstrapTarget) => acts().bootstrapStop(t), node({ port: h.refusedPort }))),
      ).toEqual(EXPECTED.unreachable);
    });
  });
});
