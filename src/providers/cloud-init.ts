import type { BootScript } from '../core/provider';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Single-quote a value for POSIX sh. */
export function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * Render a {@link BootScript} as a shell script with its environment exported first.
 * Used by clouds that take a raw startup script (Massed Compute, Verda) and inside cloud-init.
 */
export function renderShellScript(boot: BootScript): string {
  const body = boot.script.startsWith('#!') ? boot.script.slice(boot.script.indexOf('\n') + 1) : boot.script;
  const exports = Object.entries(boot.env)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => {
      if (!ENV_NAME.test(k)) throw new Error(`boot script env name "${k}" is not a valid shell variable name`);
      return `export ${k}=${shQuote(v)}`;
    });
  return ['#!/bin/bash', 'set -euo pipefail', ...exports, body].join('\n') + '\n';
}

/**
 * Render a {@link BootScript} (and optional SSH keys) to cloud-init user-data, the one
 * function every cloud that takes cloud-init uses. The script is written to a root-only file
 * and run once by `runcmd`, so it does not appear in the instance metadata logs twice.
 */
export function renderCloudInit(boot: BootScript | undefined, sshKeys: string[] = []): string {
  const lines = ['#cloud-config'];
  if (sshKeys.length > 0) {
    lines.push('ssh_authorized_keys:');
    for (const k of sshKeys) lines.push(`  - ${JSON.stringify(k)}`);
  }
  if (boot) {
    const script = renderShellScript(boot);
    lines.push(
      'write_files:',
      '  - path: /var/lib/gpuprov/boot.sh',
      "    permissions: '0700'",
      '    owner: root:root',
      '    encoding: b64',
      `    content: ${Buffer.from(script, 'utf8').toString('base64')}`,
      'runcmd:',
      '  - [bash, -c, "mkdir -p /var/lib/gpuprov && /var/lib/gpuprov/boot.sh > /var/log/gpuprov-boot.log 2>&1"]',
    );
  }
  return lines.join('\n') + '\n';
}
