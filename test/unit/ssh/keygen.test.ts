import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { utils } from 'ssh2';
import { describe, expect, it } from 'vitest';
import { ed25519Raw, generateEd25519, opensshPrivateKey } from '../../../src/ssh/keygen';

const haveKeygen = existsSync('/usr/bin/ssh-keygen');

/** A key whose public half starts with a zero byte (the case ssh2's generator gets wrong). */
function keyWithLeadingZero(): { seed: Buffer; pub: Buffer } {
  for (let i = 0; i < 20_000; i++) {
    const key = ed25519Raw();
    if (key.pub[0] === 0) return key;
  }
  throw new Error('no key with a leading zero found');
}

describe('ed25519 keys in OpenSSH format', () => {
  it('ssh2 parses what we write, and the public key matches', () => {
    for (let i = 0; i < 50; i++) {
      const k = generateEd25519('t');
      const parsed = utils.parseKey(k.private);
      if (parsed instanceof Error) throw parsed;
      const p = Array.isArray(parsed) ? parsed[0]! : parsed;
      expect(p.type).toBe('ssh-ed25519');
      expect(`ssh-ed25519 ${p.getPublicSSH().toString('base64')} t`).toBe(k.public);
    }
  });

  it.skipIf(!haveKeygen)('OpenSSH loads a key whose public half starts with a zero byte', () => {
    const { seed, pub } = keyWithLeadingZero();
    const file = join(mkdtempSync(join(tmpdir(), 'gpuprov-keys-')), 'id');
    writeFileSync(file, opensshPrivateKey(seed, pub, 'zero'), { mode: 0o600 });
    const derived = execFileSync('ssh-keygen', ['-y', '-f', file], { encoding: 'utf8' }).trim();
    expect(Buffer.from(derived.split(' ')[1]!, 'base64').subarray(-32)).toEqual(pub);
  });
});
