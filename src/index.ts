/** gpuprov as a library: the typed client, the workflow API, and the provider contract. */
export { GpuprovClient, type StartResult, type VmListing } from './client/client';
export * from './core/api';
export type { CloudProvider, Offer, Observed, InstanceSpec, Capabilities, Location, SshEndpoint, ResourceRequest } from './core/provider';
export { ProviderError, ERROR_KINDS, type ErrorKind, type BlockScope } from './core/errors';
