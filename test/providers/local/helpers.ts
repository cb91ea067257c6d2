/**
 * Shared setup for the local-cloud tests: a throw-away root under the OS temp dir, a fault
 * file the test can rewrite, and a close() that kills every sshd the root ever started. The
 * instances' SSH server is OpenSSH's or the built-in one (`makeCloud(prefix, mode)`; without a
 * mode, `GPUPROV_LOCAL_SSHD` or the provider's own choice).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'vitest';
import { LocalProvider, liveSshdPids } from '../../../src/providers/local';
import type { SshdMode } from '../../../src/providers/local/api';
import type { FaultRule } from '../../../src/providers/local/faults';
import { CONFORMANCE_DEPLOYMENT } from '../conformance';

export const SSHD = '/usr/sbin/sshd';
export const run = promisify(execFile);

/**
 * Run `body` as a describe block when sshd is installed. Without sshd the suite is skipped,
 * unless GPUPROV_REQUIRE_ALL=1: then it fails and says what to install.
 */
export function describeWithSshd(name: string, body: () => void): void {
  if (existsSync(SSHD)) {
    describe(name, body);
  } else if (process.env.GPUPROV_REQUIRE_ALL === '1') {
    describe(name, () => {
      it('needs OpenSSH sshd', () => {
        throw new Error(`${SSHD} is missing and GPUPROV_REQUIRE_ALL=1: apt-get install -y openssh-server`);
      });
    });
  } else {
    describe.skip(`${name} (no ${SSHD})`, body);
  }
}

/** Both SSH servers an instance can run. */
export const SSHD_MODES = ['openssh', 'builtin'] as const;

/**
 * One describe block per SSH server: OpenSSH's (as describeWithSshd: skipped without sshd) and
 * the built-in one (needs only Node, plus util-linux `script` for terminals).
 */
export function describeEachSshd(name: string, body: (mode: (typeof SSHD_MODES)[number]) => void): void {
  for (const mode of SSHD_MODES) {
    if (mode === 'openssh') describeWithSshd(`${name} [openssh]`, () => body(mode));
    else describe(`${name} [builtin]`, () => body(mode));
  }
}

export interface LocalCloud {
  root: string;
  faultsFile: string;
  provider: LocalProvider;
  /** A provider of another deployment on the same root. */
  twin(deployment: string): LocalProvider;
  /** Replace the fault file (the provider re-reads it on every call). */
  setFaults(rules: FaultRule[]): Promise<void>;
  /** Live sshd PIDs under the root. */
  pids(): number[];
  close(): Promise<void>;
}

let nonce = 0;
/** A fresh rule id, so a rule identical to an earlier one gets its own `times` counter. */
export function freshId(): string {
  nonce += 1;
  return `t${process.pid}-${nonce}-${Date.now()}`;
}

export async function makeCloud(prefix: string, mode?: SshdMode, deployment = CONFORMANCE_DEPLOYMENT): Promise<LocalCloud> {
  const root = await mkdtemp(join(tmpdir(), `gpuprov-${prefix}-`));
  const faultsFile = join(root, 'faults.json');
  const sshd = mode ?? ((process.env.GPUPROV_LOCAL_SSHD || 'auto') as SshdMode);
  const twin = (d: string): LocalProvider => new LocalProvider({ root, faultsFile, sshd, deployment: d });
  const provider = twin(deployment);
  return {
    root,
    faultsFile,
    provider,
    twin,
    setFaults: (rules) => writeFile(faultsFile, JSON.stringify({ rules })),
    pids: () => liveSshdPids(root),
    close: async () => {
      for (const pid of liveSshdPids(root)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** A throw-away client key pair for `ssh -i`. */
export async function makeClientKey(dir: string, name = 'client_ed25519'): Promise<{ key: string; pub: string }> {
  const key = join(dir, name);
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'gpuprov-test', '-f', key]);
  return { key, pub: (await readFile(`${key}.pub`, 'utf8')).trim() };
}

export async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

/** Observe until `done` or `timeoutMs`; returns the last observation. */
export async function waitFor<T>(probe: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last = await probe();
  while (!done(last) && Date.now() < end) {
    await sleep(100);
    last = await probe();
  }
  return last;
}
