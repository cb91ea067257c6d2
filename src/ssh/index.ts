/**
 * SSH for gpuprov: the worker's identity, the one session type, the pinned-host-key check, the
 * one error and its failure mapping, and the launch probe. Only this folder talks to ssh2.
 * (`./keygen` is imported directly by the CLI, which needs key files but no connection, and
 * `./server`, the built-in SSH server, by the local cloud, which runs it as `./builtin-sshd`.)
 */
export { SshError, sshFailure, throwSshFailure, type SshErrorReason } from './errors';
export { fingerprintOfBlob, hostKeyOfBlob, keyTypeOfBlob, matchesPinnedKey } from './host-key';
export { loadOrCreateSshIdentity, type SshIdentity } from './identity';
export { ProbeCommandError, sshProber, type ProbeResult, type ProbeTarget, type SshProber } from './probe';
export { SshSession, withSsh, type ConnectOptions, type ExecOptions, type ExecResult, type SshTarget } from './session';
