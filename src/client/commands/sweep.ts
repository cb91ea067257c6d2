import { EXIT_FAILED, EXIT_OK, type Command } from '../command';
import { connectClient } from '../connect';
import { leaf } from '../define';
import { table } from '../output';
import { deploymentOf, sweepNow, watcherStates } from '../watchers';

export const sweepCommand: Command = leaf({
  name: 'sweep',
  summary: "delete orphans now: instances with this deployment's tag and no running workflow (the account watchers find them)",
  flags: [
    {
      name: 'dry-run',
      type: 'boolean',
      meaning: 'only list the orphans the account watchers see, with when each would be deleted; delete nothing',
      default: 'off: delete every orphan now, without waiting out the grace period',
      example: '--dry-run',
    },
  ],
  temporal: true,
  async run({ values, json }, io) {
    const conn = await connectClient(io, { autoStart: false });
    const deployment = deploymentOf(io.env, conn.namespace);
    if (values['dry-run'] === true) {
      const states = await watcherStates(conn.client, deployment);
      const orphans = states.flatMap((s) => s.orphans.map((o) => ({ cloud: s.cloud, region: s.region, ...o })));
      if (json) {
        io.out(JSON.stringify({ deployment, watchers: states.length, orphans }) + '\n');
        return EXIT_OK;
      }
      if (orphans.length === 0) {
        io.out(`no orphans (${states.length} account watcher(s) of deployment ${deployment}). next: npx provision list --all\n`);
        return EXIT_OK;
      }
      io.out(
        table([
          ['VM', 'CLOUD', 'REGION', 'INSTANCES', 'FIRST SEEN', 'DELETED AFTER'],
          ...orphans.map((o) => [o.vmName, o.cloud, o.region, o.instanceIds.join(','), o.firstSeenAt, o.deleteAfter]),
        ]),
      );
      io.out(`\n${orphans.length} orphan(s). next: npx provision sweep (deletes them now)\n`);
      return EXIT_OK;
    }
    const results = await sweepNow(conn.client, deployment);
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
