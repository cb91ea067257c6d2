/**
 * The k3s step of vmWorkflow: CheckBootInstall → Install? → AwaitApi → Validate (→ one SAN
 * re-run) → Ready. The kubeconfig step is the CLI's (`provision kubeconfig`), so it never
 * enters history. Decisions live in `src/core/boot-probe.ts` and `src/core/k3s-access.ts`.
 *
 * Runs inline in vmWorkflow (not a child workflow), like launch and teardown: one status in one
 * history. It adds a handful of activities plus one probe + timer per boot-probe interval, at
 * most ~15 min / interval of them, far below the continue-as-new threshold.
 */
import { sleep } from '@temporalio/workflow';
import type { K3sTarget, ValidateResult } from '../activities/k3s';
import { apiAccessFor, type K3sStatus } from '../core/k3s-access';
import { decideBoot, pushTakesOver } from '../core/boot-probe';
import type { Capabilities } from '../core/provider';
import type { LaunchResult } from '../core/api';
import type { VmContext } from './context';
import { failureInfo } from './failure-info';
import { defaultUser } from './attempt';
import { k3sInstalling, k3sPolling, k3sProbing } from './proxies';

export interface K3sRunInput {
  caps: Capabilities;
  result: LaunchResult;
  /** The installer went in as this VM's boot script. */
  bootRoute: boolean;
  /** GPUs of the offer (nvidia.com/gpu must be allocatable). */
  expectGpus: number;
}

export type K3sOutcome = { kind: 'ready'; k8s: K3sStatus } | { kind: 'failed'; k8s: K3sStatus; message: string } | { kind: 'cancelled'; k8s: K3sStatus };

/** One k3s step's target, status notes and activity calls, shared by its phases. */
interface K3sStep {
  readonly ctx: VmContext;
  readonly input: K3sRunInput;
  readonly access: K3sStatus['access'];
  readonly target: K3sTarget;
  readonly apiHost: string;
  readonly sans: string[];
  /** Mutated as the step goes; copied into each stage update. */
  readonly k8s: K3sStatus;
  note(text: string, patch?: Partial<K3sStatus>): void;
  push(reason: string, pushSans: string[], takeover: boolean): Promise<void>;
  awaitApi(): Promise<void>;
  validate(): Promise<ValidateResult>;
  readBootProbe(): ReturnType<ReturnType<typeof k3sProbing>['readBootProbe']>;
}

function k3sStep(ctx: VmContext, input: K3sRunInput): K3sStep {
  const kt = ctx.tuning;
  const r = input.result;
  const access = apiAccessFor(input.caps);
  const target: K3sTarget = {
    endpoint: r.endpoint,
    defaultUser: defaultUser(input.caps),
    hostKey: r.hostKey,
    ...(r.workerKeyFingerprint ? { workerKey: { fingerprint: r.workerKeyFingerprint, vm: ctx.status.name } } : {}),
  };
  const apiHost = access === 'Direct' ? r.endpoint.host : '127.0.0.1';
  const sans = [...new Set([r.endpoint.host, apiHost])];
  const k8s: K3sStatus = { enabled: true, access, pushes: 0, note: 'k3s: checking the boot install' };
  const note = (text: string, patch: Partial<K3sStatus> = {}): void => {
    Object.assign(k8s, patch, { note: text });
    ctx.setStage('k8s', { k8s: { ...k8s } });
  };
  const probe = k3sProbing();
  const install = k3sInstalling(kt);
  return {
    ctx,
    input,
    access,
    target,
    apiHost,
    sans,
    k8s,
    note,
    push: async (reason, pushSans, takeover) => {
      note(`k3s: installing over SSH (${reason})`, { route: reason });
      await install.pushInstaller({ target, sans: pushSans, takeover });
      k8s.pushes = (k8s.pushes ?? 0) + 1;
    },
    awaitApi: async () => {
      note('k3s: waiting for the API');
      const { apiPort } = await ctx.interruptibly(() =>
        k3sPolling('k3s: wait for /readyz', kt.k3sApiDeadlineMs).awaitApi(target, Date.now() + kt.k3sApiDeadlineMs),
      );
      k8s.apiPort = apiPort;
    },
    validate: async () => {
      note('k3s: validating the cluster');
      return ctx.interruptibly(() =>
        k3sPolling('k3s: validate node, CoreDNS, GPUs, API certificate', kt.k3sValidateDeadlineMs).validateCluster({
          target,
          access,
          apiHost,
          expectGpus: input.expectGpus,
          giveUpAt: Date.now() + kt.k3sValidateDeadlineMs,
        }),
      );
    },
    readBootProbe: () => probe.readBootProbe(target),
  };
}

/** CheckBootInstall: one probe per interval until the table says installed or push; false when cancelled. */
async function checkBootInstall(step: K3sStep): Promise<boolean> {
  const { ctx, input, k8s } = step;
  const kt = ctx.tuning;
  const since = Date.now();
  for (;;) {
    if (ctx.cancelRequested) return false;
    const seen = await ctx.interruptibly(() => step.readBootProbe());
    const d = decideBoot(seen, { bootRoute: input.bootRoute, waitedMs: Date.now() - since, maxWaitMs: kt.k3sBootMaxWaitMs });
    if (d.action === 'installed') {
      k8s.route = 'boot';
      return true;
    }
    if (d.action === 'push') {
      await step.push(d.reason, step.sans, pushTakesOver(d.reason));
      return true;
    }
    step.note(`k3s: ${d.reason}`);
    await ctx.interruptibly(() => sleep(kt.k3sProbeIntervalMs, { summary: 'k3s: wait for the boot install' }));
  }
}

/** AwaitApi → Validate, with one SAN re-run when the certificate lacks the public host; the API port. */
async function awaitAndValidate(step: K3sStep): Promise<number> {
  await step.awaitApi();
  let v = await step.validate();
  if (!v.ok) {
    // The boot install could not learn the public host: re-run once with it as a SAN.
    await step.push(`API certificate lacks ${v.missingSan}`, [...step.sans, v.missingSan], false);
    await step.awaitApi();
    v = await step.validate();
    if (!v.ok) throw new Error(`the API certificate still does not cover ${v.missingSan} (SANs: ${[...v.sans.dns, ...v.sans.ips].join(', ')})`);
  }
  return v.apiPort;
}

/** Run the k3s step for a launched VM. Sets stage `k8s` notes as it goes; never throws for k3s errors. */
export async function runK3s(ctx: VmContext, input: K3sRunInput): Promise<K3sOutcome> {
  const step = k3sStep(ctx, input);
  const { k8s, access, apiHost } = step;
  try {
    ctx.setStage('k8s', { k8s: { ...k8s } });
    if (!(await checkBootInstall(step))) return { kind: 'cancelled', k8s };
    if (ctx.cancelRequested) return { kind: 'cancelled', k8s };
    k8s.apiPort = await awaitAndValidate(step);
    const how = access === 'Direct' ? `API at https://${apiHost}:${k8s.apiPort}` : `API over SSH: provision tunnel ${ctx.status.name}`;
    Object.assign(k8s, { note: `k3s ready (${how}); kubeconfig: provision kubeconfig ${ctx.status.name}` });
    return { kind: 'ready', k8s: { ...k8s } };
  } catch (err) {
    const f = failureInfo(err);
    if (f.cancelled) return { kind: 'cancelled', k8s };
    const message = `k3s failed: ${f.message}`;
    Object.assign(k8s, { note: `${message} — the VM is kept for debugging; \`provision down ${ctx.status.name}\` removes it` });
    return { kind: 'failed', k8s: { ...k8s }, message };
  }
}
