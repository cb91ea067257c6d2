/** gpuprov as a library: the typed client, the workflow API (VMs and fleets), and the provider contract. */
export { connect, type ConnectOptions } from './client/connect';
export { GpuprovClient, FleetClient, type FleetHandle, type StartResult, type VmHandle, type VmListing } from './client/client';
export * from './core/api';
export * from './core/fleet-api';
export type { FleetShape, FleetGroup } from './core/fleet/types';
export type { CloudProvider, Offer, Observed, InstanceSpec, Capabilities, Location, SshEndpoint, ResourceRequest } from './core/provider';
export { ProviderError, ERROR_KINDS, type ErrorKind, type BlockScope } from './core/errors';
/** The payload codec (GPUPROV_CODEC_KEYS): spread `codecOption(process.env)` into your own Client or Worker options. */
export { codecOption, AesGcmCodec, CodecError, parseKeys, type CodecKeys } from './codec';
