import { WorkflowFailedError } from '@temporalio/client';
import type { LaunchFailureDetails } from '../../core/api';
import { InputError } from '../../core/errors';
import { GpuprovClient } from '../client';
import { EXIT_FAILED, EXIT_OK, type Command } from '../command';
import { connectClient } from '../connect';
import { leaf } from '../define';
import { follow } from '../follow';
import { checkSpecFromFlags, START_ARGS, START_FLAGS, startOptions } from '../options';
import { attemptsRows, offerPrice, table, where } from '../output';
import { userKey, writeSshEntry } from '../user-files';
import { withCommandSpan } from '../../telemetry/tracing';
import { publicKeyProblem } from '../vm-spec';
import { explainStartFailure } from '../server-errors';
import { checkBlockBudget } from '../block-budget';

const NOTES = `Re-running start for a name that is launching or up attaches to it; for a VM in k8s-failed it
re-runs the k3s step. The VM is reachable as \`ssh NAME\` once ready (an ssh config entry with the
pinned host key is written). Bounds (a typo guard, not a quota) are the same for fleet shapes.`;

export const startCommand: Command = leaf({
  name: 'start',
  summary: 'launch a VM (fails over across offers) and wait until it is reachable over SSH',
  args: START_ARGS,
  flags: START_FLAGS,
  notes: NOTES,
  temporal: true,
  async run({ values }, io) {
    const json = values.json === true;
    const opts = startOptions(values);
    const key = await userKey(io.env, opts.sshKeyPath);
    const bad = publicKeyProblem(key.publicKey);
    if (bad)
      throw new InputError(
        '--ssh-key',
        `${key.privateKeyPath}.pub ${bad}`,
        'rewrite it with: ssh-keygen -y -f KEY > KEY.pub, or pass another key with --ssh-key PATH',
      );
    const spec = checkSpecFromFlags({ ...opts.spec, publicKeys: [key.publicKey] });
    // One trace from here to Ready (or failure, or detach): the workflow's spans are its children.
    return withCommandSpan(io.env, 'provision start', { 'gpuprov.vm': spec.name }, async (span) => {
      const conn = await connectClient(io, { autoStart: true });
      const client = new GpuprovClient(conn.client, io.env.GPUPROV_TASK_QUEUE || undefined);
      await checkBlockBudget(client, spec);
      const { handle, started, retriedK8s } = await client.start(spec).catch(async (err: unknown) => {
        throw await explainStartFailure(err, conn);
      });
      if (retriedK8s) {
        // Let the workflow take the retry signal before following, or the old k8s-failed ends the watch.
        for (let i = 0; i < 50 && (await client.status(spec.name)).stage === 'k8s-failed'; i++) await new Promise((r) => setTimeout(r, 200));
      }
      const ui = conn.uiUrl ? `${conn.uiUrl}/namespaces/${conn.namespace}/workflows/${handle.workflowId}` : undefined;
      if (!json)
        io.err(
          `${started ? 'Launching' : retriedK8s ? 'Re-running the k3s step of' : 'Already launching or up; attaching to'} ${spec.name} (workflow ${handle.workflowId})${ui ? ` — Web UI: ${ui}` : ''}\n`,
        );
      if (opts.detach) {
        span.setAttribute('gpuprov.detached', true);
        if (json) io.out(JSON.stringify({ ok: true, name: spec.name, workflowId: handle.workflowId, started, ui }) + '\n');
        else io.err(`next: npx provision status ${spec.name}   (or: npx provision start --name ${spec.name} to follow)\n`);
        return EXIT_OK;
      }
      const s = await follow(client, io, spec.name, json);
      span.setAttribute('gpuprov.stage', s?.stage ?? 'unknown');
      if (s?.stage === 'ready' || s?.stage === 'k8s-failed') {
        const user = s.endpoint?.user ?? 'root';
        const entry = s.endpoint && s.hostKey ? await writeSshEntry(io.env, spec.name, s.endpoint, user, key, s.hostKey) : undefined;
        if (json) {
          io.out(JSON.stringify({ ok: s.stage === 'ready', status: s, sshConfig: entry, ui }) + '\n');
        } else {
          if (s.offer?.cloud === 'local' && !spec.clouds)
            io.err('note: no cloud credentials are configured on the worker, so gpuprov used the local test cloud (sshd processes on this machine).\n');
          io.out(
            table([
              ['cloud', `${s.offer?.cloud ?? ''}`],
              ['where', where(s)],
              ['price', offerPrice(s.offer)],
              ['ssh', `${user}@${s.endpoint?.host}:${s.endpoint?.port}`],
              ['host key', s.hostKeyFingerprint ?? ''],
              ['k3s', s.k8s?.note ?? (s.k8s?.enabled ? 'ready' : 'off')],
              ['attempts', String(s.attempts.length)],
              ...(s.ttlExpiresAt ? [['auto-down', s.ttlExpiresAt]] : []),
            ]),
          );
          io.out(`\n${spec.name} is ${s.stage}. Next:\n  ssh ${spec.name}\n  npx provision status ${spec.name}\n  npx provision down ${spec.name}\n`);
        }
        return s.stage === 'ready' ? EXIT_OK : EXIT_FAILED;
      }
      return await reportEnd(io, handle, { stage: s?.stage, kind: s?.error?.kind }, json, spec.name);
    });
  },
});

/**
 * What to do after a failed launch. A plan every cloud refused as a whole (an engine not reachable
 * or too old, refused credentials) is fixed where the message says, not by widening the search.
 */
export function nextAfterFailure(reason: LaunchFailureDetails['reason'] | undefined, kind: string | undefined, name: string): string {
  if (reason === 'no-offers' && (kind === 'Unavailable' || kind === 'Credentials'))
    return `Nothing was started. Next: fix what the message names on the worker (the cloud's engine, endpoint or credentials), then run start again; check with: npx provision offers`;
  return `Nothing is left running from these attempts. Next: widen the search (--gpu, --region, --cloud, --max-price) or add --retry-until-up; details: npx provision status ${name}`;
}

async function reportEnd(
  io: Parameters<Command['run']>[1],
  handle: { result(): Promise<unknown> },
  end: { stage: string | undefined; kind: string | undefined },
  json: boolean,
  name: string,
): Promise<number> {
  const { stage } = end;
  const err = await handle.result().then(
    () => undefined,
    (e: unknown) => e,
  );
  const details =
    err instanceof WorkflowFailedError ? ((err.cause as { details?: unknown[] } | undefined)?.details?.[0] as LaunchFailureDetails | undefined) : undefined;
  const message = err instanceof WorkflowFailedError ? (err.cause?.message ?? err.message) : `ended in stage ${stage ?? 'unknown'}`;
  if (json) {
    io.out(JSON.stringify({ ok: false, stage, error: { message, reason: details?.reason }, attempts: details?.attempts ?? [] }) + '\n');
  } else {
    io.err(`\n${name} did not come up (${stage ?? 'unknown'}): ${message.split('\n')[0]}\n`);
    if (details?.attempts.length) io.err(table(attemptsRows(details.attempts)));
    io.err(`${nextAfterFailure(details?.reason, end.kind, name)}\n`);
  }
  return EXIT_FAILED;
}
