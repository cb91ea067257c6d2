/** `provision tunnel <name>`: forward 127.0.0.1:6443 to the VM's k3s API over SSH until Ctrl-C. */
import { spawn } from 'node:child_process';
import { K3S_API_PORT } from '../../core/k3s-access';
import { K3sAccessError, k3sAccessOf, parseArgs, portOption, sshArgs, vmStatus } from '../k3s-access';
import { EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK, errLine, outLine, type Command, type Io } from '../command';
import { k3sCommand } from './k3s-command';

const USAGE = `Usage: provision tunnel <name> [--port <local port>] [--identity <key file>]

Forwards 127.0.0.1:<port> (default 6443) to the k3s API on the VM over SSH, with your key,
until Ctrl-C. Use it with the kubeconfig of \`provision kubeconfig <name>\` (same --port).

Options:
  --port <n>         local port (default 6443)
  --identity <file>  SSH private key (default: your ssh defaults / agent; env GPUPROV_SSH_IDENTITY)`;

async function run(args: string[], io: Io): Promise<number> {
  const { positional, opts } = parseArgs(args, ['port', 'identity']);
  const name = positional[0];
  if (!name || positional.length > 1) throw new K3sAccessError(`expected one VM name\n\n${USAGE}`, EXIT_BAD_INPUT);
  const localPort = portOption(opts.get('port'), K3S_API_PORT);
  const identity = typeof opts.get('identity') === 'string' ? (opts.get('identity') as string) : io.env.GPUPROV_SSH_IDENTITY;

  const access = k3sAccessOf(await vmStatus(io, name));
  const remotePort = access.k8s.apiPort ?? K3S_API_PORT;
  const ssh = sshArgs(access, identity);
  const child = spawn('ssh', ['-N', '-o', 'ExitOnForwardFailure=yes', '-o', 'ServerAliveInterval=30', '-L', `127.0.0.1:${localPort}:127.0.0.1:${remotePort}`, ...ssh.args], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  let stopped = false;
  const stop = (): void => {
    stopped = true;
    child.kill('SIGTERM');
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  errLine(io, `Forwarding 127.0.0.1:${localPort} → ${name}'s k3s API (127.0.0.1:${remotePort} on ${access.endpoint.host}) over SSH. Ctrl-C stops it.`);
  outLine(io, `server: https://127.0.0.1:${localPort}`);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  process.removeListener('SIGINT', stop);
  process.removeListener('SIGTERM', stop);
  ssh.cleanup();
  if (stopped) return EXIT_OK;
  errLine(io, `the SSH tunnel ended (exit ${code ?? 'signal'}): ${stderr.trim()}`);
  return EXIT_FAILED;
}

export const tunnelCommand: Command = k3sCommand('tunnel', "forward 127.0.0.1:6443 to the VM's k3s API over SSH", USAGE, run);
