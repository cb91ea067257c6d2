/** Runs one k3s CLI command as its own process (as a user would), for tests: `tsx run-command.ts tunnel <args…>`. */
import { kubeconfigCommand } from '../../../src/client/commands/kubeconfig';
import { tunnelCommand } from '../../../src/client/commands/tunnel';
import type { Io } from '../../../src/client/command';

const [which, ...args] = process.argv.slice(2);
const command = which === 'tunnel' ? tunnelCommand : which === 'kubeconfig' ? kubeconfigCommand : undefined;
if (!command) {
  process.stderr.write('usage: run-command.ts tunnel|kubeconfig <args…>\n');
  process.exit(2);
}
const io: Io = { out: (s) => process.stdout.write(`${s}\n`), err: (s) => process.stderr.write(`${s}\n`), isTTY: false, env: process.env };
command.run(args, io).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${String(err)}\n`);
    process.exit(1);
  },
);
