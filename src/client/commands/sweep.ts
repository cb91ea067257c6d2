import { InputError } from '../../core/errors';
import { EXIT_FAILED, EXIT_OK, type Command } from '../command';
import { connectClient } from '../connect';
import { currentDeployment } from '../deployment-record';
import { leaf } from '../define';
import { show } from '../flags';
import { checkName } from '../options';
import { table } from '../output';
import { sweepNow, watcherStates } from '../watchers';

/** `--include-unknown a,b`: VM names, each checked like `start --name`. */
function unknownNames(raw: unknown): string[] {
  if (typeof raw !== 'string') return [];
  const names = raw.split(',').map((x) => x.trim());
  if (names.some((n) => n === ''))
    throw new InputError('--include-unknown', `${show(raw)} has an empty item`, 'separate VM names with commas, e.g. --include-unknown gpu1,gpu2');
  return [...new Set(names.map((n) => checkName('--include-unknown', n, 'provision sweep --include-unknown gpu1')))];
}

export const sweepCommand: Command = leaf({
  name: 'sweep',
  summary: 'delete orphans now: instances this deployment recorded creating that no running workflow owns (the account watchers find them)',
  flags: [
    {
      name: 'dry-run',
      type: 'boolean',
      meaning: 'only list the orphans the account watchers see, with when each would be deleted, and the unknown instances; delete nothing',
      default: 'off: delete every orphan now, without waiting out the grace period',
      example: '--dry-run',
    },
    {
      name: 'include-unknown',
      type: 'string',
      value: 'NAME[,NAME…]',
      format: 'VM names as start --name takes them, separated by commas',
      meaning:
        "also delete these unknown VM names: instances with this deployment's tag that it has no record of creating (another install with the same id, a hand-made one, or one from before the record existed). Check first that nobody uses them",
      default: 'none: unknown instances are only listed, never deleted',
      example: '--include-unknown gpu7',
    },
  ],
  temporal: true,
  async run({ values, json }, io) {
    const named = unknownNames(values['include-unknown']);
    const conn = await connectClient(io, { autoStart: false });
    const deployment = await currentDeployment(conn.client, io.env, conn.namespace);
    if (values['dry-run'] === true) {
      const states = await watcherStates(conn.client, deployment);
      const orphans = states.flatMap((s) => s.orphans.map((o) => ({ cloud: s.cloud, region: s.region, ...o })));
      const unknown = states.flatMap((s) => (s.unknown ?? []).map((o) => ({ cloud: s.cloud, region: s.region, ...o })));
      if (json) {
        io.out(JSON.stringify({ deployment, watchers: states.length, orphans, unknown }) + '\n');
        return EXIT_OK;
      }
      if (orphans.length === 0 && unknown.length === 0) {
        io.out(`no orphans (${states.length} account watcher(s) of deployment ${deployment}). next: npx provision list --all\n`);
        return EXIT_OK;
      }
      io.out(
        table([
          ['VM', 'CLOUD', 'REGION', 'INSTANCES', 'FIRST SEEN', 'DELETED AFTER'],
          ...orphans.map((o) => [o.vmName, o.cloud, o.region, o.instanceIds.join(','), o.firstSeenAt, o.deleteAfter]),
          ...unknown.map((o) => [o.vmName, o.cloud, o.region, [...o.instanceIds, ...(o.sideResources ?? [])].join(','), o.firstSeenAt, 'never (unknown)']),
        ]),
      );
      if (orphans.length) io.out(`\n${orphans.length} orphan(s). next: npx provision sweep (deletes them now)\n`);
      if (unknown.length) io.out(`\n${unknownAdvice(unknown.length, deployment, unknown[0]!.vmName)}\n`);
      return EXIT_OK;
    }
    const results = await sweepNow(conn.client, deployment, named);
    const swept = results.flatMap((r) => r.swept);
    const failed = swept.filter((s) => !s.ok);
    if (json) {
      io.out(JSON.stringify({ ok: failed.length === 0, deployment, watchers: results.length, swept }) + '\n');
      return failed.length === 0 ? EXIT_OK : EXIT_FAILED;
    }
    if (swept.length === 0) io.out(`no orphans to delete (${results.length} account watcher(s) of deployment ${deployment}).\n`);
    else
      io.out(table([['VM', 'INSTANCES', 'RESULT'], ...swept.map((s) => [s.vmName, s.instanceIds.join(','), s.ok ? 'deleted' : `FAILED: ${s.error ?? ''}`])]));
    if (failed.length) io.out(`\n${failed.length} deletion(s) failed; the watcher retries each cycle. next: npx provision sweep --dry-run\n`);
    return failed.length === 0 ? EXIT_OK : EXIT_FAILED;
  },
});

/** What an operator does with unknown instances (`sweep --dry-run`, `list --all`). */
export function unknownAdvice(count: number, deployment: string, example: string): string {
  return (
    `${count} UNKNOWN: tagged with deployment ${deployment}, but this deployment has no record of creating them, so they are never deleted by themselves. ` +
    `Find who made them (another install with the same GPUPROV_DEPLOYMENT, a hand-made instance, one from an older gpuprov); ` +
    `if nobody uses one: npx provision sweep --include-unknown ${example}`
  );
}
