import { ProviderError } from '../core/errors';
import type { CloudProvider } from '../core/provider';
import { CallPacer, pacedProvider } from './pacer';

export interface RegistryOptions {
  /** Vendor calls per second by cloud, paced within this process (src/providers/pacer.ts); undefined = unpaced. */
  perSecond?: (cloud: string) => number | undefined;
}

/** The clouds this worker can reach, by name. Built once in `src/worker.ts`. */
export class ProviderRegistry {
  private readonly byName = new Map<string, CloudProvider>();

  constructor(providers: Iterable<CloudProvider>, o: RegistryOptions = {}) {
    for (const p of providers) {
      const rate = o.perSecond?.(p.name);
      this.byName.set(p.name, rate !== undefined ? pacedProvider(p, new CallPacer(rate)) : p);
    }
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
