/** The installer script (`install-k3s.sh`) as data: read on the worker, handed to workflows. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BootScript } from '../core/provider';

let cached: string | undefined;

/** The installer's text. Found next to this module (tsx, vitest) or in the source tree (built `dist/`). */
export function installerText(): string {
  if (cached !== undefined) return cached;
  const candidates = [join(__dirname, 'install-k3s.sh'), join(__dirname, '..', '..', '..', 'src', 'k3s', 'install-k3s.sh')];
  const path = candidates.find((p) => existsSync(p));
  if (!path) throw new Error(`install-k3s.sh not found (looked in ${candidates.join(', ')})`);
  cached = readFileSync(path, 'utf8');
  return cached;
}

export interface InstallerOptions {
  /** Extra TLS SANs (the host the user will reach the API at). */
  sans?: string[];
  /** Stop a hung install that still holds the lock (a push after a timed-out boot install). */
  takeover?: boolean;
}

/** The installer with its environment, as a boot script or for `bash -s` over SSH. */
export function installerScript(o: InstallerOptions = {}): BootScript {
  const env: Record<string, string> = {};
  if (o.sans && o.sans.length > 0) env.K3S_TLS_SANS = o.sans.join(',');
  if (o.takeover) env.GPUPROV_K3S_TAKEOVER = '1';
  return { script: installerText(), env };
}
