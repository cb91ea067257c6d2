/** The `provision` CLI: one command per file under ./commands; this file only dispatches. */
import pkg from '../../package.json';
import { didYouMean } from './catalog';
import { EXIT_BAD_INPUT, EXIT_OK, type Command, type Io } from './command';
import { cancelCommand, downCommand } from './commands/down';
import { fleetCommand } from './commands/fleet';
import { kubeconfigCommand } from './commands/kubeconfig';
import { listCommand } from './commands/list';
import { logsCommand } from './commands/logs';
import { offersCommand } from './commands/offers';
import { serverCommand } from './commands/server';
import { sshCommand } from './commands/ssh';
import { startCommand } from './commands/start';
import { statusCommand } from './commands/status';
import { tunnelCommand } from './commands/tunnel';

export const COMMANDS: Command[] = [
  startCommand, statusCommand, listCommand, sshCommand, downCommand, cancelCommand, offersCommand,
  kubeconfigCommand, tunnelCommand, fleetCommand, logsCommand, serverCommand,
];

function help(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'provision — rent GPU VMs on many clouds, handed over ready (durable Temporal workflows)',
    '',
    'usage: npx provision COMMAND [flags]   (every command takes --json; exit 0 ok, 1 failed, 2 bad input)',
    '',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'start here: npx provision start --name gpu1',
    '',
  ].join('\n');
}

export async function runCli(argv: string[], io: Io): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.out(help());
    return name === undefined ? EXIT_BAD_INPUT : EXIT_OK;
  }
  if (name === '--version') {
    io.out(`${pkg.version}\n`);
    return EXIT_OK;
  }
  const cmd = COMMANDS.find((c) => c.name === name);
  if (!cmd) {
    const hint = didYouMean(name, COMMANDS.map((c) => c.name));
    io.err(`error: unknown command "${name}"\n  fix: ${hint ? `did you mean "provision ${hint}"?` : 'see npx provision --help'}\n`);
    return EXIT_BAD_INPUT;
  }
  if (args.includes('--help') || args.includes('-h')) {
    io.out(`usage: ${cmd.usage}\n\n${cmd.summary}\n`);
    return EXIT_OK;
  }
  return cmd.run(args, io);
}

/** Entry point for bin/provision.js. */
export function main(): void {
  const io: Io = { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s), isTTY: Boolean(process.stderr.isTTY), env: process.env };
  runCli(process.argv.slice(2), io).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
