import { ProviderError } from '../core/errors';
import type { CloudProvider } from '../core/provider';

/** The clouds this worker can reach, by name. Built once in `src/worker.ts`. */
export class ProviderRegistry {
  private readonly byName = new Map<string, CloudProvider>();

  constructor(providers: Iterable<CloudProvider>) {
    for (const p of providers) this.byName.set(p.name, p);
  }

  /** The provider, or InvalidRequest naming the configured ones. */
  get(name: string): CloudProvider {
    const p = this.byName.get(name);
    if (!p) {
      throw new ProviderError('InvalidRequest', `cloud "${name}" is not configured on this worker (configured: ${this.names().join(', ') || 'none'})`);
    }
    return p;
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  names(): string[] {
    return [...this.byName.keys()];
  }
}
