/**
 * The `@google-cloud/compute` clients of one ComputeApi (./api.ts): the SDK loaded on first use,
 * REST mode (`fallback: true`) against Compute or a fixture endpoint, and the credential values
 * to redact from every error they let out. No SDK retries, ever.
 */
import type * as ComputeSdk from '@google-cloud/compute';
import type {
  AcceleratorTypesClient,
  FirewallsClient,
  GlobalOperationsClient,
  ImagesClient,
  InstancesClient,
  RegionsClient,
  ReservationsClient,
  ZoneOperationsClient,
  ZonesClient,
} from '@google-cloud/compute';
import * as fs from 'node:fs';

/** How to reach Compute: the project, and for tests a base URL such as `http://127.0.0.1:4321` (no auth then). */
export interface ComputeApiOptions {
  project: string;
  endpoint?: string;
  /** A service-account or ADC JSON file; without it the SDK uses Application Default Credentials. */
  keyFilename?: string;
  /** `maxResults` per list page (Compute's default is 500). */
  pageSize?: number;
}

/** No SDK retries, ever: a "not yet" or a 5xx goes back to Temporal's retry policy. */
export const NO_RETRY = { retry: null, autoPaginate: false, timeout: 60_000 };

/** HTTP status of an SDK error, if it has one (404 gone / 409 exists are answers, not failures). */
export function statusOf(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const s = (err as { status?: unknown }).status;
  return typeof s === 'number' ? s : undefined;
}

/** The credential values in a service-account key file, to redact from errors (the SDK reads the file itself). */
function keyFileSecrets(file: string | undefined): string[] {
  if (!file) return [];
  try {
    const k = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
    return [k.private_key, k.private_key_id, k.client_secret, k.refresh_token].filter((v): v is string => typeof v === 'string');
  } catch {
    return [];
  }
}

let sdk: typeof ComputeSdk | undefined;

/**
 * @google-cloud/compute, loaded with the first ComputeApi rather than at import: every worker
 * imports this adapter (through the default registry), and only one configured for GCP should
 * carry the SDK (~130 MB of RSS).
 */
function computeSdk(): typeof ComputeSdk {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- deferred on purpose (see above)
  sdk ??= require('@google-cloud/compute') as typeof ComputeSdk;
  return sdk;
}

/** The SDK clients ComputeApi calls through, and what to redact from their errors. */
export interface ComputeClients {
  instances: InstancesClient;
  zoneOps: ZoneOperationsClient;
  globalOps: GlobalOperationsClient;
  firewalls: FirewallsClient;
  images: ImagesClient;
  zones: ZonesClient;
  accelerators: AcceleratorTypesClient;
  regions: RegionsClient;
  reservations: ReservationsClient;
  /** Credential values to redact from every error these clients let out. */
  secrets: string[];
}

export function computeClients(opts: ComputeApiOptions): ComputeClients {
  const options: NonNullable<ConstructorParameters<typeof InstancesClient>[0]> = { fallback: true, projectId: opts.project };
  if (opts.endpoint) {
    const u = new URL(opts.endpoint);
    options.apiEndpoint = u.hostname;
    options.port = Number(u.port || (u.protocol === 'http:' ? 80 : 443));
    options.protocol = u.protocol === 'http:' ? 'http' : 'https';
  }
  const secrets = keyFileSecrets(opts.keyFilename);
  if (opts.keyFilename) options.keyFilename = opts.keyFilename;
  // A fixture endpoint without a key file: a placeholder API key stops the SDK from looking
  // for Application Default Credentials (it is sent as x-goog-api-key and means nothing).
  else if (opts.endpoint) options.apiKey = 'gpuprov-fixture-no-auth';
  if (options.apiKey) secrets.push(options.apiKey);
  const compute = computeSdk();
  return {
    instances: new compute.InstancesClient(options),
    zoneOps: new compute.ZoneOperationsClient(options),
    globalOps: new compute.GlobalOperationsClient(options),
    firewalls: new compute.FirewallsClient(options),
    images: new compute.ImagesClient(options),
    zones: new compute.ZonesClient(options),
    accelerators: new compute.AcceleratorTypesClient(options),
    regions: new compute.RegionsClient(options),
    reservations: new compute.ReservationsClient(options),
    secrets,
  };
}
