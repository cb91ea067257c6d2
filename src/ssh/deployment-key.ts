/**
 * The deployment SSH identity: one key shared by every worker of a deployment, so that any
 * worker can reach any VM. It comes from `GPUPROV_SSH_KEY_FILE` (a private key file) or
 * `GPUPROV_SSH_PRIVATE_KEY` (the key text); with neither, the worker makes its own key under its
 * state directory (fine for one host, e.g. the embedded default). Each VM records the fingerprint
 * of the key that created it; an SSH activity on a worker with another key fails at once.
 */
import { readFile } from 'node:fs/promises';
import { InputError } from '../core/errors';
import { SshError, sshFailure } from './errors';
import { BadPrivateKey, identityFromPrivateKey, loadOrCreateSshIdentity, type SshIdentity } from './identity';

export const SSH_KEY_FILE_VAR = 'GPUPROV_SSH_KEY_FILE';
export const SSH_PRIVATE_KEY_VAR = 'GPUPROV_SSH_PRIVATE_KEY';

/** The one-line way to make a deployment key (README and error messages). */
export const MAKE_DEPLOYMENT_KEY = "ssh-keygen -t ed25519 -N '' -C gpuprov-deploy -f gpuprov-deploy-key";

const FIX = `make one with \`${MAKE_DEPLOYMENT_KEY}\` and give every worker ${SSH_KEY_FILE_VAR}=$PWD/gpuprov-deploy-key`;

/**
 * The worker's SSH identity from the environment: `GPUPROV_SSH_KEY_FILE`, else
 * `GPUPROV_SSH_PRIVATE_KEY` (real newlines, or `\n` escapes for env files that cannot hold them),
 * else the auto-made key in `autoKeyDir`. A variable that is set but unusable throws an
 * InputError naming it and the fix (the worker exits 2); the message never quotes the key.
 */
export async function loadWorkerIdentity(env: NodeJS.ProcessEnv, autoKeyDir: string): Promise<SshIdentity> {
  const file = env[SSH_KEY_FILE_VAR];
  const text = env[SSH_PRIVATE_KEY_VAR];
  if (file && text) throw new InputError(SSH_KEY_FILE_VAR, `both ${SSH_KEY_FILE_VAR} and ${SSH_PRIVATE_KEY_VAR} are set`, 'set only one of them');
  if (file) {
    let content: string;
    try {
      content = await readFile(file, 'utf8');
    } catch (err) {
      throw new InputError(
        SSH_KEY_FILE_VAR,
        `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
        `point it at a readable private key file, or ${FIX}`,
      );
    }
    return parsed(content, SSH_KEY_FILE_VAR, file);
  }
  if (text) return parsed(text.includes('\n') ? text : text.replace(/\\n/g, '\n'), SSH_PRIVATE_KEY_VAR);
  return loadOrCreateSshIdentity(autoKeyDir);
}

function parsed(content: string, variable: string, path?: string): SshIdentity {
  try {
    return { ...identityFromPrivateKey(content), ...(path ? { privateKeyPath: path } : {}) };
  } catch (err) {
    if (!(err instanceof BadPrivateKey)) throw err;
    const fix = /encrypted/.test(err.message) && path ? `remove the passphrase (\`ssh-keygen -p -N '' -f ${path}\`), or ${FIX}` : FIX;
    throw new InputError(variable, `${path ?? 'the value'} is not a usable SSH key: ${err.message}`, fix);
  }
}

/** Which deployment key a VM was created with, as SSH activity inputs carry it (public). */
export interface WorkerKeyRef {
  /** `SHA256:…` of the key the create activity installed on the VM. */
  fingerprint: string;
  /** The VM's name, for the message. */
  vm: string;
}

/**
 * Before any SSH to a VM: this worker's key must be the one the VM was created with. Throws the
 * non-retryable WorkerKeyMismatch failure naming the fix; `expected` absent (inputs from
 * histories older than this check) skips it.
 */
export function requireWorkerKey(identity: SshIdentity, expected: WorkerKeyRef | undefined): void {
  if (!expected || expected.fingerprint === identity.fingerprint) return;
  throw sshFailure(
    new SshError(
      'worker-key-mismatch',
      `this worker's SSH key ${identity.fingerprint} is not the deployment key ${expected.fingerprint} that created VM ${expected.vm}; give every worker the same ${SSH_KEY_FILE_VAR} (or ${SSH_PRIVATE_KEY_VAR})`,
    ),
  );
}
