/**
 * The k3s scenarios of record.test.ts, on the simulated k3s hosts of test/k3s/sim: one VM on a
 * cloud that runs boot scripts (k3s installed at boot), one on a cloud without (installer pushed
 * over SSH). Each is torn down once Ready, so its history ends.
 */
import { join } from 'node:path';
import { createActivities } from '../../src/activities';
import type { SshIdentity } from '../../src/ssh/identity';
import { teardownSignal, vmWorkflowId, type VmStatus } from '../../src/core/api';
import type { K3sStatus } from '../../src/core/k3s-access';
import type { K3sTuning } from '../../src/core/tuning';
import { ProviderRegistry } from '../../src/providers/registry';
import type { vmWorkflow } from '../../src/workflows';
import { startTestWorker, testEnv } from '../harness/temporal';
import { SimulatedK3sCloud, type SimHost } from '../k3s/sim/simulated-cloud';
import { FAST, waitFor } from '../workflows/helpers';

/** Probes once a second: fewer boot-probe timers in the boot-route history than the k3s tests' 300 ms. */
const K3S_RECORD: K3sTuning = {
  k3sBootMaxWaitMs: 60_000,
  k3sProbeIntervalMs: 1_000,
  k3sInstallTimeoutMs: 60_000,
  k3sApiDeadlineMs: 20_000,
  k3sValidateDeadlineMs: 20_000,
};

/** Runs both VMs to their end; returns their workflow IDs. */
export async function recordK3s(root: string, ssh: SshIdentity): Promise<{ boot: string; push: string }> {
  const boot = new SimulatedK3sCloud('sim-boot', join(root, 'boot'), { bootScript: true, openPorts: true });
  const push = new SimulatedK3sCloud('sim-ssh', join(root, 'ssh'), { bootScript: false, openPorts: false });
  const worker = await startTestWorker({ activities: createActivities({ registry: new ProviderRegistry([boot, push]), ssh, owner: 'default' }) });
  const client = await testEnv().client();

  const run = async (cloud: SimulatedK3sCloud, name: string, host: SimHost, route: string): Promise<string> => {
    cloud.host(name, host);
    const h = await client.workflow.start<typeof vmWorkflow>('vmWorkflow', {
      taskQueue: worker.taskQueue,
      workflowId: vmWorkflowId(name),
      args: [{ spec: { name, clouds: [cloud.name] }, tuning: { ...FAST, healthIntervalMs: 60_000, ...K3S_RECORD } }],
    });
    try {
      const s: VmStatus = await waitFor(h, (x) => x.stage === 'ready' || x.stage === 'k8s-failed' || x.stage === 'failed', 'k3s to settle', 120_000);
      const k8s = s.k8s as K3sStatus;
      if (s.stage !== 'ready' || k8s.route !== route)
        throw new Error(`${name}: expected ready by route ${route}, got ${s.stage} (${k8s.route ?? '-'}): ${k8s.note}`);
    } finally {
      await h.signal(teardownSignal).catch(() => undefined);
    }
    const end = await h.result();
    if (end.stage !== 'terminated') throw new Error(`${name} ended ${end.stage}`);
    return h.workflowId;
  };

  try {
    return {
      boot: await run(boot, 'hist-k3s-boot', { boot: 'normal' }, 'boot'),
      push: await run(push, 'hist-k3s-push', {}, 'no-boot-route'),
    };
  } finally {
    await worker.stop();
    await boot.close();
    await push.close();
  }
}
