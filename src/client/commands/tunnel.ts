/** `provision tunnel <name>`: forward 127.0.0.1:6443 to the VM's k3s API over SSH until Ctrl-C. */
import { spawn } from 'node:child_process';
import { K3S_API_PORT } from '../../core/k3s-access';
import { identityFlag, K3S_ACCESS_FLAGS, k3sAccessOf, portFlag, sshArgs, vmStatus } from '../k3s-access';
import { EXIT_OK, errLine, outLine, type Command, type Io } from '../command';
import { vmNameArg } from '../args';
import { leaf } from '../define';
import { CommandFailure } from '../output';

async function tunnel(name: string, values: { port?: string; identity?: string }, io: Io): Promise<number> {
  const localPort = portFlag(values.port, K3S_API_PORT);
  const identity = identityFlag(values.identity, io);

  const access = k3sAccessOf(await vmStatus(io, name));
  const remotePort = access.k8s.apiPort ?? K3S_API_PORT;
  const ssh = sshArgs(access, identity);
  const child = spawn(
    'ssh',
    ['-N', '-o', 'ExitOnForwardFailure=yes', '-o', 'ServerAliveInterval=30', '-L', `127.0.0.1:${localPort}:127.0.0.1:${remotePort}`, ...ssh.args],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
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
  throw new CommandFailure(
    `the SSH tunnel ended (exit ${code ?? 'signal'}): ${stderr.trim()}`,
    `check that \`ssh ${name}\` works and that 127.0.0.1:${localPort} is free (or pick another --port)`,
  );
}

export const tunnelCommand: Command = leaf({
  name: 'tunnel',
  summary: "forward 127.0.0.1:6443 to the VM's k3s API over SSH",
  args: [vmNameArg('tunnel', 'the VM (started with k3s)')],
  flags: K3S_ACCESS_FLAGS,
  notes: 'Runs until Ctrl-C. Use it with the kubeconfig of `provision kubeconfig NAME` (same --port).',
  temporal: true,
  run: ({ args, values }, io) => tunnel(args[0]!, values, io),
});
