/** `provision kubeconfig <name>`: fetch k3s's kubeconfig over SSH (the user's key), write it 0600. */
import { execFile } from 'node:child_process';
import { chmod, mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { configDir } from '../../paths';
import { K3S_API_PORT } from '../../core/k3s-access';
import { apiServerUrl, rewriteKubeconfig, serverOf } from '../../k3s/kubeconfig';
import { CAT_KUBECONFIG_SCRIPT } from '../../k3s/remote';
import { identityFlag, K3S_ACCESS_FLAGS, k3sAccessOf, portFlag, sshArgs, vmStatus } from '../k3s-access';
import { EXIT_OK, errLine, outLine, type Command, type Io } from '../command';
import { vmNameArg } from '../args';
import { leaf } from '../define';
import { CommandFailure } from '../output';

const NOTES = `Fetches the VM's k3s kubeconfig over SSH with your key (never through Temporal), points it at
the API (the VM's public host, or 127.0.0.1:PORT of \`provision tunnel\` when the cloud opens no
ports), names its context NAME, writes it with mode 0600 and prints the KUBECONFIG= line.`;

function fetchOverSsh(args: string[], name: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('ssh', [...args, CAT_KUBECONFIG_SCRIPT], { maxBuffer: 4 * 1024 * 1024, timeout: 60_000 }, (err, stdout, stderr) => {
      if (err)
        reject(
          new CommandFailure(
            `could not read the kubeconfig over SSH: ${stderr.trim() || err.message}`,
            `check that \`ssh ${name}\` works, or pass your key with --identity`,
          ),
        );
      else resolve(stdout);
    });
  });
}

async function fetchKubeconfig(name: string, values: { port?: string; identity?: string; out?: string; json?: boolean }, io: Io): Promise<number> {
  const localPort = portFlag(values.port, K3S_API_PORT);
  const identity = identityFlag(values.identity, io);

  const access = k3sAccessOf(await vmStatus(io, name));
  const ssh = sshArgs(access, identity);
  let raw: string;
  try {
    raw = await fetchOverSsh(ssh.args, name);
  } finally {
    ssh.cleanup();
  }
  const mode = access.k8s.access ?? 'SshTunnel';
  const remotePort = access.k8s.apiPort ?? Number(new URL(serverOf(raw) ?? `https://127.0.0.1:${K3S_API_PORT}`).port || K3S_API_PORT);
  const server = apiServerUrl({ access: mode, host: access.endpoint.host, apiPort: remotePort, localPort });
  const text = rewriteKubeconfig(raw, { name, server });

  const out = values.out ?? join(configDir(io.env), 'kube', `${name}.yaml`);
  await mkdir(join(out, '..'), { recursive: true, mode: 0o700 });
  const tmp = `${out}.${process.pid}.tmp`;
  await writeFile(tmp, text, { mode: 0o600 });
  await chmod(tmp, 0o600);
  await rename(tmp, out);

  if (values.json === true) {
    outLine(io, JSON.stringify({ path: out, server, context: name, access: mode }, null, 2));
    return EXIT_OK;
  }
  outLine(io, `export KUBECONFIG=${out}`);
  if (mode === 'SshTunnel')
    errLine(
      io,
      `${name}'s cloud opens no API port: run \`provision tunnel ${name}${localPort === K3S_API_PORT ? '' : ` --port ${localPort}`}\` in another terminal first.`,
    );
  return EXIT_OK;
}

export const kubeconfigCommand: Command = leaf({
  name: 'kubeconfig',
  summary: "write the VM's k3s kubeconfig (0600) and print the KUBECONFIG= line",
  args: [vmNameArg('kubeconfig', 'the VM (started with k3s)')],
  flags: [
    ...K3S_ACCESS_FLAGS,
    {
      name: 'out',
      type: 'string',
      value: 'FILE',
      meaning: 'where to write the kubeconfig (mode 0600)',
      format: 'a file path',
      default: '<config dir>/kube/NAME.yaml (~/.config/gpuprov/kube/NAME.yaml)',
      example: '--out ./kubeconfig.yaml',
    },
  ],
  notes: NOTES,
  temporal: true,
  run: ({ args, values }, io) => fetchKubeconfig(args[0]!, values, io),
});
