/**
 * "Did you mean": the CLI's spelling help for cloud, region, GPU and flag names. What the CLI
 * knows about each cloud (names, regions, k3s, credentials) is the cloud table, src/core/clouds.ts.
 */

export { distance, didYouMean } from '../core/did-you-mean';
