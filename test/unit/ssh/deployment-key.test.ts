/**
 * The deployment SSH identity: loaded from GPUPROV_SSH_KEY_FILE or GPUPROV_SSH_PRIVATE_KEY (else
 * the auto-made key), validated with a message naming the variable and the fix (never the key),
 * and the worker-key check every SSH activity runs before connecting.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { createActivities } from '../../../src/activities';
import { InputError } from '../../../src/core/errors';
import { FAILURE_TYPES } from '../../../src/core/failures';
import { ProviderRegistry } from '../../../src/providers/registry';
import { loadOrCreateSshIdentity, loadWorkerIdentity, requireWorkerKey, type SshIdentity, type SshProber } from '../../../src/ssh';
import { generateEd25519 } from '../../../src/ssh/keygen';
import { FakeProvider } from '../../harness/fake-provider';

const haveKeygen = existsSync('/usr/bin/ssh-keygen');
const dir = (): string => mkdtempSync(join(tmpdir(), 'gpuprov-deploy-key-'));

function keyFile(text = generateEd25519('t').private): string {
  const f = join(dir(), 'gpuprov-deploy-key');
  writeFileSync(f, text, { mode: 0o600 });
  return f;
}

async function inputErrorOf(p: Promise<unknown>): Promise<InputError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(InputError);
  return err as InputError;
}

/** The key's base64 lines: none of them may appear in a message. */
const secretLines = (text: string): string[] => text.split('\n').filter((l) => l.length > 20 && !l.startsWith('-----'));

describe('loadWorkerIdentity', () => {
  it('GPUPROV_SSH_KEY_FILE: the key in the file, its fingerprint as ssh-keygen prints it', async () => {
    const f = keyFile();
    const id = await loadWorkerIdentity({ GPUPROV_SSH_KEY_FILE: f }, dir());
    expect(id.privateKeyPath).toBe(f);
    expect(id.publicKey).toMatch(/^ssh-ed25519 AAAA\S+ gpuprov-worker$/);
    expect(id.fingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    if (haveKeygen) expect(execFileSync('ssh-keygen', ['-lf', f], { encoding: 'utf8' })).toContain(id.fingerprint);
  });

  it.skipIf(!haveKeygen)('a key made with the README line loads', async () => {
    const d = dir();
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'gpuprov-deploy', '-f', join(d, 'k')]);
    const id = await loadWorkerIdentity({ GPUPROV_SSH_KEY_FILE: join(d, 'k') }, dir());
    expect(readFileSync(join(d, 'k.pub'), 'utf8')).toContain(id.publicKey.split(' ')[1]);
    expect(execFileSync('ssh-keygen', ['-lf', join(d, 'k')], { encoding: 'utf8' })).toContain(id.fingerprint);
  });

  it('GPUPROV_SSH_PRIVATE_KEY: the same key as text, with real newlines or \\n escapes, and no path', async () => {
    const text = generateEd25519('t').private;
    const fromFile = await loadWorkerIdentity({ GPUPROV_SSH_KEY_FILE: keyFile(text) }, dir());
    for (const value of [text, text.replace(/\n/g, '\\n')]) {
      const id = await loadWorkerIdentity({ GPUPROV_SSH_PRIVATE_KEY: value }, dir());
      expect(id.fingerprint).toBe(fromFile.fingerprint);
      expect(id.publicKey).toBe(fromFile.publicKey);
      expect(id.privateKey).toBe(text);
      expect(id.privateKeyPath).toBeUndefined();
    }
  });

  it('nothing set (or set empty): the key made once under the given directory', async () => {
    const d = dir();
    const first = await loadWorkerIdentity({ GPUPROV_SSH_KEY_FILE: '', GPUPROV_SSH_PRIVATE_KEY: '' }, d);
    expect(first.privateKeyPath).toBe(join(d, 'id_ed25519'));
    expect((await loadWorkerIdentity({}, d)).fingerprint).toBe(first.fingerprint);
    expect((await loadOrCreateSshIdentity(d)).fingerprint).toBe(first.fingerprint);
  });

  describe('bad input names the variable and the fix, never the key', () => {
    const rsa = haveKeygen
      ? (() => {
          const f = join(dir(), 'rsa');
          execFileSync('ssh-keygen', ['-q', '-t', 'rsa', '-b', '2048', '-N', '', '-f', f]);
          return readFileSync(f, 'utf8');
        })()
      : undefined;
    const encrypted = haveKeygen
      ? (() => {
          const f = join(dir(), 'enc');
          execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', 'a passphrase', '-f', f]);
          return readFileSync(f, 'utf8');
        })()
      : undefined;
    const pair = generateEd25519('t');
    const cases: { what: string; text: string; why: RegExp }[] = [
      { what: 'not a key', text: 'hello, not a key at all, just some text that is long enough\n', why: /not an OpenSSH private key/ },
      { what: 'a truncated key', text: pair.private.slice(0, 120), why: /not an OpenSSH private key/ },
      { what: 'the public key', text: `${pair.public}\n`, why: /public key/ },
      ...(rsa ? [{ what: 'an RSA key', text: rsa, why: /ssh-rsa key; gpuprov needs an ed25519 key/ }] : []),
      ...(encrypted ? [{ what: 'an encrypted key', text: encrypted, why: /encrypted with a passphrase/ }] : []),
    ];

    for (const c of cases) {
      it(`${c.what} in GPUPROV_SSH_KEY_FILE or GPUPROV_SSH_PRIVATE_KEY`, async () => {
        const f = keyFile(c.text);
        const byFile = await inputErrorOf(loadWorkerIdentity({ GPUPROV_SSH_KEY_FILE: f }, dir()));
        expect(byFile.field).toBe('GPUPROV_SSH_KEY_FILE');
        expect(byFile.message).toContain(f);
        expect(byFile.message).toMatch(c.why);
        expect(byFile.suggestion).toContain("ssh-keygen -t ed25519 -N ''");
        const byText = await inputErrorOf(loadWorkerIdentity({ GPUPROV_SSH_PRIVATE_KEY: c.text }, dir()));
        expect(byText.field).toBe('GPUPROV_SSH_PRIVATE_KEY');
        expect(byText.message).toMatch(c.why);
        for (const e of [byFile, byText]) for (const line of secretLines(c.text)) expect(`${e.message} ${e.suggestion}`).not.toContain(line);
      });
    }

    it('an encrypted key file: the fix removes the passphrase of that file', async () => {
      if (!encrypted) return;
      const f = keyFile(encrypted);
      expect((await inputErrorOf(loadWorkerIdentity({ GPUPROV_SSH_KEY_FILE: f }, dir()))).suggestion).toContain(`ssh-keygen -p -N '' -f ${f}`);
    });

    it('a file that does not exist', async () => {
      const e = await inputErrorOf(loadWorkerIdentity({ GPUPROV_SSH_KEY_FILE: '/nonexistent/gpuprov-deploy-key' }, dir()));
      expect(e.field).toBe('GPUPROV_SSH_KEY_FILE');
      expect(e.message).toContain('cannot read /nonexistent/gpuprov-deploy-key: ENOENT');
    });

    it('both variables set', async () => {
      const e = await inputErrorOf(loadWorkerIdentity({ GPUPROV_SSH_KEY_FILE: keyFile(), GPUPROV_SSH_PRIVATE_KEY: pair.private }, dir()));
      expect(e.message).toContain('both');
      expect(e.suggestion).toBe('set only one of them');
    });

    it('the worker exits 2 naming the variable and the fix, before it connects anywhere', () => {
      const r = spawnSync(join(process.cwd(), 'node_modules/.bin/tsx'), ['src/worker.ts'], {
        encoding: 'utf8',
        env: { ...process.env, GPUPROV_SSH_PRIVATE_KEY: pair.public, GPUPROV_STATE_DIR: dir(), TEMPORAL_ADDRESS: '127.0.0.1:1' },
      });
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toContain('gpuprov worker: GPUPROV_SSH_PRIVATE_KEY: the value is not a usable SSH key: this is a public key');
      expect(r.stderr).toContain("fix: make one with `ssh-keygen -t ed25519 -N ''");
    });
  });
});

describe('requireWorkerKey and the SSH activities', () => {
  const mine = generateEd25519('mine').private;
  const theirs = generateEd25519('theirs').private;

  async function failureOf(p: Promise<unknown>): Promise<ApplicationFailure> {
    const err = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApplicationFailure);
    return err as ApplicationFailure;
  }

  it('the same key or no recorded key (older histories) passes; another key is WorkerKeyMismatch, final, naming the fix', async () => {
    const me = await loadWorkerIdentity({ GPUPROV_SSH_PRIVATE_KEY: mine }, dir());
    const creator = await loadWorkerIdentity({ GPUPROV_SSH_PRIVATE_KEY: theirs }, dir());
    expect(() => requireWorkerKey(me, undefined)).not.toThrow();
    expect(() => requireWorkerKey(me, { fingerprint: me.fingerprint, vm: 'gpu1' })).not.toThrow();
    const f = await failureOf(Promise.resolve().then(() => requireWorkerKey(me, { fingerprint: creator.fingerprint, vm: 'gpu1' })));
    expect(f.type).toBe(FAILURE_TYPES.WorkerKeyMismatch);
    expect(f.nonRetryable).toBe(true);
    expect(f.message).toBe(
      `this worker's SSH key ${me.fingerprint} is not the deployment key ${creator.fingerprint} that created VM gpu1; give every worker the same GPUPROV_SSH_KEY_FILE (or GPUPROV_SSH_PRIVATE_KEY)`,
    );
  });

  it('create returns the fingerprint it installed; probe, k3s and bootstrap refuse another key before connecting', async () => {
    const me: SshIdentity = await loadWorkerIdentity({ GPUPROV_SSH_PRIVATE_KEY: mine }, dir());
    const creator = await loadWorkerIdentity({ GPUPROV_SSH_PRIVATE_KEY: theirs }, dir());
    const fake = new FakeProvider();
    let probes = 0;
    const prober: SshProber = async () => {
      probes += 1;
      return { fingerprint: 'SHA256:x', hostKey: 'ssh-ed25519 AAAA' };
    };
    const acts = createActivities({ registry: new ProviderRegistry([fake]), ssh: me, owner: 'unit', prober, inlineWindowMs: 0 });
    const offer = (await fake.plan({ vmName: 'gpu1', k8s: false }))[0]!;
    const created = await acts.prepareAndCreate(offer, { vmName: 'gpu1', owner: 'unit', publicKeys: [], idempotencyKey: 'k', openPorts: [22] });
    expect(created.workerKeyFingerprint).toBe(me.fingerprint);

    // A port nothing listens on: only the check can answer, and it answers first.
    const endpoint = { host: '127.0.0.1', port: 1, user: 'root' };
    const workerKey = { fingerprint: creator.fingerprint, vm: 'gpu1' };
    const node = { fleet: 'f', group: 'g', index: 0, role: 'worker', node: 'f-g-0' };
    const spec = { verify: ['true'], start: 'true', ready: { command: 'true' }, timeout: 60 };
    for (const p of [
      () => acts.probeSsh({ endpoint, defaultUser: 'root', workerKey }),
      () => acts.readBootProbe({ endpoint, defaultUser: 'root', workerKey }),
      () => acts.pushInstaller({ target: { endpoint, defaultUser: 'root', workerKey } }),
      () => acts.awaitApi({ endpoint, defaultUser: 'root', workerKey }),
      () => acts.validateCluster({ target: { endpoint, defaultUser: 'root', workerKey }, access: 'SshTunnel', apiHost: '127.0.0.1', expectGpus: 0 }),
      () => acts.bootstrapVerify({ endpoint, workerKey, node, spec }),
      () => acts.bootstrapStart({ endpoint, workerKey, node, spec }),
      () => acts.bootstrapAwaitReady({ endpoint, workerKey, node, spec }),
      () => acts.bootstrapStop({ endpoint, workerKey, node, spec }),
    ]) {
      const f = await failureOf(p());
      expect({ type: f.type, nonRetryable: f.nonRetryable }).toEqual({ type: FAILURE_TYPES.WorkerKeyMismatch, nonRetryable: true });
      expect(f.message).toContain(`${me.fingerprint} is not the deployment key ${creator.fingerprint} that created VM gpu1`);
    }
    expect(probes).toBe(0);
    // The same key goes on to the prober.
    expect(await acts.probeSsh({ endpoint, defaultUser: 'root', workerKey: { fingerprint: me.fingerprint, vm: 'gpu1' } })).toEqual({
      fingerprint: 'SHA256:x',
      hostKey: 'ssh-ed25519 AAAA',
    });
    expect(probes).toBe(1);
  });
});
