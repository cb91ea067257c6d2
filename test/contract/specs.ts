/**
 * Where each cloud's machine-readable API definition comes from, for the spec-judged contract
 * suite (spec.test.ts). CI installs only what a package registry ships, so:
 *
 * | cloud          | definition                                              | at CI time                         |
 * |----------------|---------------------------------------------------------|------------------------------------|
 * | gcp            | Compute Engine Discovery document `compute.v1`          | google-api-python-client (PyPI)    |
 * | aws            | botocore service models `ec2`, `pricing`, `service-quotas` | botocore (PyPI, boto3's core)    |
 * | nebius         | its .proto files                                        | the nebius SDK's descriptors (nebius-protos.ts) |
 * | vastai         | OpenAPI 3.1, vast-ai/docs `api-reference/openapi.yaml`  | no package ships it: GitHub only   |
 * | runpod         | OpenAPI 3.0,  runpod/docs `api-reference-v2/openapi.json`| GitHub only                        |
 * | hyperstack     | OpenAPI 3.0, NexGenCloud/hyperstack-sdk-go `api/openapi.yaml` | GitHub only                  |
 * | digitalocean   | OpenAPI 3.0, digitalocean/openapi `specification/DigitalOcean-public.v2.yaml` | GitHub only  |
 * | lambda, verda  | OpenAPI documents on the vendors' documentation sites   | neither GitHub nor a registry      |
 * | primeintellect | an OpenAPI document served by its API                   | neither GitHub nor a registry      |
 * | massedcompute  | nothing machine-readable                                | —                                  |
 *
 * A GitHub-only definition is judged when a developer points `GPUPROV_SPEC_<CLOUD>` at a local
 * copy of it (never committed: the suite reads it from wherever it lies); otherwise its line says
 * why it was not judged.
 */
import type { ContractEnv } from './clouds';
import { HTTP_CONTRACTS } from './clouds';
import type { ResourceRequest, SpotMode } from '../../src/core/provider';
import { startRunPodDouble } from '../providers/runpod/double';

export type SpecKind = 'openapi' | 'discovery' | 'botocore-query' | 'botocore-json';

/** Where the definition is read: a package in the vendor venv, or a local file (GitHub-only ones). */
export type SpecSource =
  | { kind: 'discovery'; api: string; version: string; pkg: string }
  | { kind: 'botocore-query' | 'botocore-json'; service: string; pkg: string }
  | { kind: 'openapi'; env: string; published: string };

/** One HTTP cloud whose adapter lives are judged against its vendor's definition. */
export interface SpecContract {
  cloud: string;
  source: SpecSource;
  request: ResourceRequest;
  imageDisk?: { image: string; diskGb?: number };
  /** A life with `--spot` (a cloud that sells spot): its bid search and spot create are judged too. */
  spot?: SpotMode;
  start(): Promise<Pick<ContractEnv, 'provider' | 'http' | 'close'>>;
}

/** A definition no registry package ships: `published` says where it is. */
const elsewhere = (cloud: string, published: string): SpecSource => ({ kind: 'openapi', env: `GPUPROV_SPEC_${cloud.toUpperCase()}`, published });
const github = (cloud: string, at: string): SpecSource => elsewhere(cloud, `published only on GitHub, ${at}`);

const contract = (cloud: string, source: SpecSource): SpecContract => {
  const c = HTTP_CONTRACTS.find((h) => h.cloud === cloud);
  if (!c) throw new Error(`no HTTP contract for ${cloud}`);
  return { cloud, source, request: c.request, ...(c.imageDisk ? { imageDisk: c.imageDisk } : {}), ...(c.spot ? { spot: c.spot } : {}), start: () => c.start() };
};

export const SPEC_CONTRACTS: SpecContract[] = [
  contract('gcp', { kind: 'discovery', api: 'compute', version: 'v1', pkg: 'google-api-python-client' }),
  contract('vastai', github('vastai', 'vast-ai/docs api-reference/openapi.yaml')),
  {
    cloud: 'runpod',
    source: github('runpod', 'runpod/docs api-reference-v2/openapi.json'),
    request: { vmName: 'contract', gpu: { model: 'H100', count: 1 }, k8s: true },
    imageDisk: { image: 'pytorch/pytorch:2.4.0-cuda12.4-cudnn9-runtime', diskGb: 80 },
    start: async () => {
      const d = await startRunPodDouble();
      return { provider: d.provider, http: d.server.http, close: () => d.close() };
    },
  },
  contract('hyperstack', github('hyperstack', 'NexGenCloud/hyperstack-sdk-go api/openapi.yaml')),
  contract('digitalocean', github('digitalocean', 'digitalocean/openapi specification/DigitalOcean-public.v2.yaml')),
  contract('lambda', elsewhere('lambda', "published only on Lambda's documentation site (no repository found)")),
  contract('verda', elsewhere('verda', "published only on Verda's documentation site (no repository found)")),
  contract('primeintellect', elsewhere('primeintellect', 'served only by the API itself (no repository found)')),
];

/** Clouds with nothing machine-readable, or not vendor clouds at all. */
export const NOT_JUDGED = [
  "nebius: its .proto files are judged against the nebius SDK's descriptors, and its fixture serves the SDK every RPC (contract.test.ts)",
  'massedcompute: publishes no machine-readable API definition',
  'local, docker: not vendor clouds',
];
