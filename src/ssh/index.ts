/**
 * SSH for gpuprov: the worker's identity (the shared deployment key, or one made on first use)
 * and the check that it is the VM's, the one session type, the pinned-host-key check, the one
 * error and its failure mapping, and the launch probe. Only this folder talks to ssh2.
 * (`./keygen` is imported directly by the CLI, which needs key files but no connection, and
 * `./server`, the built-in SSH server, by the local cloud, which runs it as `./builtin-sshd`.)
 */
export { SshError, sshFailure, throwSshFailure, type SshErrorReason } from './errors';
export { fingerprintOfBlob, hostKeyOfBlob, keyTypeOfBlob, matchesPinnedKey } from './host-key';
export { BadPrivateKey, identityFromPrivateKey, loadOrCreateSshIdentity, type SshIdentity, type SshKeyFile } from './identity';
export { loadWorkerIdentity, MAKE_DEPLOYMENT_KEY, requireWorkerKey, SSH_KEY_FILE_VAR, SSH_PRIVATE_KEY_VAR, type WorkerKeyRef } from './deployment-key';
export { ProbeCommandError, sshProber, type ProbeResult, type ProbeTarget, type SshProber } from './probe';
export { SshSession, withSsh, type ConnectOptions, type ExecOptions, type ExecResult, type SshTarget } from './session';
