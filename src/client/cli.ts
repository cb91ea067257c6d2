/** The `provision` CLI: one command per file under ./commands; this file only dispatches. */
import pkg from '../../package.json';
import { didYouMean } from './catalog';
import { wantsJson } from './define';
import { show } from './flags';
import { reportError } from './output';
import { InputError } from '../core/errors';
import { EXIT_BAD_INPUT, EXIT_OK, type Command, type Io } from './command';
import { codecServerCommand } from './commands/codec-server';
import { cancelCommand, downCommand } from './commands/down';
import { explainCommand } from './commands/explain';
import { fleetCommand } from './commands/fleet';
import { kubeconfigCommand } from './commands/kubeconfig';
import { listCommand } from './commands/list';
import { logsCommand } from './commands/logs';
import { offersCommand } from './commands/offers';
import { serverCommand } from './commands/server';
import { sshCommand } from './commands/ssh';
import { startCommand } from './commands/start';
import { statusCommand } from './commands/status';
import { sweepCommand } from './commands/sweep';
import { tunnelCommand } from './commands/tunnel';
import { workerCommand } from './commands/worker';

export const COMMANDS: Command[] = [
  startCommand,
  statusCommand,
  explainCommand,
  listCommand,
  sweepCommand,
  sshCommand,
  downCommand,
  cancelCommand,
  offersCommand,
  kubeconfigCommand,
  tunnelCommand,
  fleetCommand,
  logsCommand,
  serverCommand,
  workerCommand,
  codecServerCommand,
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
    'every flag, its format, default and an example: npx provision COMMAND --help',
    'start here: npx provision start --name gpu1',
    '',
  ].join('\n');
}

export async function runCli(argv: string[], io: Io): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' ? COMMANDS.find((c) => c.name === args[0]) : undefined;
    io.out(topic ? topic.help() : help());
    return name === undefined ? EXIT_BAD_INPUT : EXIT_OK;
  }
  if (name === '--version') {
    io.out(`${pkg.version}\n`);
    return EXIT_OK;
  }
  const cmd = COMMANDS.find((c) => c.name === name);
  if (!cmd) {
    const hint = name.startsWith('-')
      ? undefined
      : didYouMean(
          name,
          COMMANDS.map((c) => c.name),
        );
    const what = name.startsWith('-') ? `${show(name)} comes before a command` : `unknown command ${show(name)}`;
    return reportError(io, new InputError('command', what, hint ? `did you mean "provision ${hint}"?` : 'see npx provision --help'), wantsJson(argv));
  }
  return cmd.run(args, io);
}

/** Entry point for bin/provision.js. */
export function main(): void {
  const io: Io = { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s), isTTY: Boolean(process.stderr.isTTY), env: process.env };
  const argv = process.argv.slice(2);
  runCli(argv, io).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.exitCode = reportError(io, err, wantsJson(argv));
    },
  );
}
