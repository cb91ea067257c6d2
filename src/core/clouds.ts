/**
 * The one per-cloud table: every fact about a cloud that something outside its adapter folder
 * reads (the CLI's up-front checks and help, the catalog, the hedge's lanes, the rate limits, the
 * adapters' capabilities). Pure data; `src/providers/default-registry.ts` holds one adapter per
 * row (a `Record<CloudName, …>`, so the compiler refuses a row without an adapter and a test
 * checks the keys match). A new cloud is its folder, one row here and one registry line.
 *
 * | cloud          | rate /s | --image                  | --disk-gb      | hedge lane | k3s          | by default | regions known |
 * |----------------|--------:|--------------------------|----------------|------------|--------------|------------|---------------|
 * | aws            |      10 | AMI id                   | root EBS       | region     | runs         | yes        | 16            |
 * | gcp            |      20 | image family or image    | boot disk      | cloud      | runs         | yes        | 10            |
 * | lambda         |       1 | image family or id       | no (the type)  | region     | runs         | yes        | 14            |
 * | runpod         |       2 | container image          | container disk | cloud      | never        | yes        | any           |
 * | primeintellect |       2 | image name               | pod disk       | cloud      | not promised | yes        | any           |
 * | vastai         |       2 | container image          | container disk | cloud      | never        | yes        | any           |
 * | hyperstack     |       2 | image name               | no (flavor)    | cloud      | runs         | yes        | any           |
 * | digitalocean   |       4 | image slug or id         | no (the size)  | cloud      | runs         | yes        | 9             |
 * | verda          |       2 | image slug or id         | OS volume      | cloud      | runs         | yes        | any           |
 * | massedcompute  |       2 | image id (a number)      | no (product)   | cloud      | runs         | yes        | any           |
 * | nebius         |       2 | image family             | boot disk      | region     | runs         | yes        | any           |
 * | docker         |       — | container image (daemon) | no             | cloud      | never        | when named | any           |
 * | local          |       — | no                       | no             | region     | never        | fallback   | 2             |
 *
 * Markets (`markets`): every cloud sells on-demand; aws, gcp, primeintellect, vastai, verda and
 * nebius also sell spot (preemptible, interruptible: each adapter's header says how its API sells
 * it and shows a reclaim); runpod's current API no longer does (its header says why). Reserved
 * capacity goes in that list too (aws, gcp; nebius's capacity block groups: src/providers/nebius/reservations.ts). What the other
 * clouds' APIs offer for it, from public specs and SDKs (December 2026; none of it is in `markets` but nebius's, no other adapter
 * does it; "none" means not found in the source named):
 * - lambda: use, buy ahead and queue none; the launch body has no reservation field (Cloud API v1.10.0 spec, docs.lambda.ai/api/cloud).
 * - runpod: use is implicit (a savings plan covers the next pod of its GPU type); buy ahead only in GraphQL `podFindAndDeployOnDemand`
 *   `savingsPlan` {planLength, upfrontCost}, absent from REST v2 `CreatePodRequest`; queue none, v2 `QUEUE` is serverless
 *   (runpod/docs pods/pricing.mdx and api-reference-v2/openapi.json; runpod/pulumi-runpod-native provider/pod.go).
 * - primeintellect: use, buy ahead and queue none (PrimeIntellect-ai/prime-cli).
 * - vastai: no reservation to launch into; buy ahead = `PUT /api/v0/instances/prepay/{id}/`, prepaying a rented instance at a discount
 *   (`vastai prepay instance`, offers priced by `search offers --type reserved`); queue none (vast-ai/vast-cli vast.py).
 * - hyperstack: contracts are read-only (`GET /pricebook/contracts[/{id}]`); the create-VM body has no contract field; buy ahead and
 *   queue none (NexGenCloud/hyperstack-sdk-python CustomerContractApi, CreateInstancesPayload).
 * - digitalocean: use, buy ahead and queue none; droplet create has no reservation field (digitalocean/openapi specification/).
 * - verda: `POST /v1/instances` takes `contract: 'LONG_TERM'` (and `pricing`), terms from `GET /v1/long-term/periods/instances`; no
 *   reservation id, and whether that buys a term or draws on one is not said there; queue none (verda-cloud/sdk-python instances, long_term).
 * - massedcompute: use, buy ahead and queue none (the /api/v1 endpoints listed by Massed-Compute/massed-compute-mcp).
 * - nebius: use = InstanceSpec `reservation_policy` {policy AUTO|FORBID|STRICT, reservation_ids: capacity block groups}; buy ahead none
 *   (capacity/v1 CapacityBlockGroupService is Get/List only); queue none, AUTO falls back to on-demand (nebius/api compute/v1/instance.proto).
 * Done: nebius (a `reserved` market = STRICT with a block-group id from its List). Later: vastai as a prepay step after launch (a discount,
 * not capacity); verda once LONG_TERM's meaning is confirmed; runpod only through GraphQL, which the adapter does not speak; hyperstack
 * could only show its contracts; the others need the vendor to publish an API. What `--spot` asks of a row: src/core/markets.ts.
 *
 * Rates are activities per second, from each vendor's documented API limits (searched December
 * 2026), below the documented rate because one activity may make a few calls:
 * aws, EC2 token buckets per account and region (non-mutating refill 20/s; RunInstances 2
 * instances/s); gcp, 1,500 requests/min per project per group; digitalocean, 250/min and
 * 5,000/hour per token; lambda, about 1/s and one launch per 10 s; vastai, a minimum interval per
 * endpoint, values not published; runpod, quotas only in RateLimit-Policy headers; the others are
 * not documented where we searched (a conservative 2). `local` and `docker` have no vendor API.
 */
import type { Capabilities, ImageSupport, Market } from './provider';

/** Every cloud an adapter exists for, in the default preference order. */
export const CLOUD_NAMES = [
  'aws',
  'gcp',
  'lambda',
  'runpod',
  'primeintellect',
  'vastai',
  'hyperstack',
  'digitalocean',
  'verda',
  'massedcompute',
  'nebius',
  'docker',
  'local',
] as const;
export type CloudName = (typeof CLOUD_NAMES)[number];

/** Default vendor-API activities per second, and where the vendor documents its limit. */
export interface CloudRateLimit {
  perSecond: number;
  source: string;
}

/**
 * The hedge's lane (src/core/hedge.ts): `region` where the cloud's identity lookups and side
 * resources are per region, so two regions may run attempts side by side; `cloud` where they are
 * not (one attempt at a time on the whole cloud).
 */
export type LaneKind = 'region' | 'cloud';

/** k3s: `runs` (VMs), `not-promised` (the adapter declines, the CLI lets the planner say so), `never` (containers or processes: the CLI refuses). */
export type K3sSupport = 'runs' | 'not-promised' | 'never';

/** One row of {@link CLOUD_TABLE}. */
export interface CloudFacts {
  /** Default pace of the cloud's API activities; false: no vendor API, no limit (every row must say). */
  rateLimit: CloudRateLimit | false;
  image: ImageSupport | false;
  diskGb: { min: number; max: number } | false;
  lane: LaneKind;
  k3s: K3sSupport;
  /** The worker's variables holding the credentials (what to fix when refused); absent: none needed. */
  credentials?: string;
  /** Planned when the user names no cloud (its credentials are present); false: only when named (`local` is also the fallback). */
  byDefault: boolean;
  /** Regions the CLI validates up front; absent: any well-formed region. */
  regions?: readonly string[];
  markets: readonly Market[];
}

const CONTAINER: ImageSupport = {
  kind: 'container',
  pattern: '^[a-z0-9][a-z0-9._/:-]{0,200}(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$',
  format: 'a container image reference (REPO[:TAG][@sha256:DIGEST])',
  example: 'nvidia/cuda:12.4.1-runtime-ubuntu22.04',
};

const vendor = (pattern: string, format: string, example: string): ImageSupport => ({ kind: 'vendor-image', pattern, format, example });
const undocumented = (): CloudRateLimit => ({ perSecond: 2, source: 'not documented: conservative default' });
const ON_DEMAND: readonly Market[] = ['on-demand'];
const ON_DEMAND_AND_SPOT: readonly Market[] = ['on-demand', 'spot'];
const DISK = { min: 10, max: 16_384 };
const CONTAINER_DISK = { min: 10, max: 4_096 };

const AWS_REGIONS = ['us-east-1', 'us-east-2', 'us-west-1', 'us-west-2', 'ca-central-1', 'eu-west-1', 'eu-west-2', 'eu-west-3', 'eu-central-1', 'eu-north-1'];
const AWS_REGIONS_2 = ['ap-south-1', 'ap-northeast-1', 'ap-northeast-2', 'ap-southeast-1', 'ap-southeast-2', 'sa-east-1'];
const GCP_REGIONS = [
  'us-central1',
  'us-east1',
  'us-east4',
  'us-west1',
  'us-west4',
  'europe-west1',
  'europe-west4',
  'asia-east1',
  'asia-northeast1',
  'asia-southeast1',
];
const LAMBDA_REGIONS = ['us-east-1', 'us-east-3', 'us-west-1', 'us-west-2', 'us-west-3', 'us-south-1', 'us-south-2', 'us-south-3', 'us-midwest-1'];
const LAMBDA_REGIONS_2 = ['europe-central-1', 'asia-south-1', 'asia-northeast-1', 'asia-northeast-2', 'me-west-1'];

/** The table, by cloud (the header above shows it at a glance). */
export const CLOUD_TABLE: Readonly<Record<CloudName, CloudFacts>> = {
  aws: {
    rateLimit: { perSecond: 10, source: 'https://docs.aws.amazon.com/ec2/latest/devguide/ec2-api-throttling.html' },
    image: { kind: 'ami', pattern: '^ami-([0-9a-f]{8}|[0-9a-f]{17})$', format: 'an AMI id (ami- and 8 or 17 hex digits)', example: 'ami-0abcdef1234567890' },
    diskGb: { min: 8, max: 16_384 },
    lane: 'region', // describeInstances, key pairs and security groups are regional
    k3s: 'runs',
    credentials: 'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE)',
    regions: [...AWS_REGIONS, ...AWS_REGIONS_2],
    byDefault: true,
    markets: ['on-demand', 'spot', 'reserved'], // reserved: capacity reservations and blocks (src/providers/aws/reserved.ts)
  },
  gcp: {
    rateLimit: { perSecond: 20, source: 'https://cloud.google.com/compute/api-quota' },
    image: {
      kind: 'gcp-image',
      pattern: '^(https://www\\.googleapis\\.com/compute/v1/)?projects/[a-z][a-z0-9.:-]{2,62}/global/images/(family/)?[a-z]([a-z0-9-]{0,61}[a-z0-9])?$',
      format: 'an image family (projects/PROJECT/global/images/family/FAMILY) or image (projects/PROJECT/global/images/NAME)',
      example: 'projects/ubuntu-os-cloud/global/images/family/ubuntu-2204-lts',
    },
    diskGb: { min: 10, max: 65_536 },
    lane: 'cloud', // the per-VM firewall is global
    k3s: 'runs',
    credentials: 'GOOGLE_APPLICATION_CREDENTIALS (a service-account key file) and GOOGLE_CLOUD_PROJECT',
    regions: GCP_REGIONS,
    byDefault: true,
    markets: ['on-demand', 'spot', 'reserved'], // specific reservations and flex-start (src/providers/gcp/reservations.ts, flex-start.ts)
  },
  lambda: {
    rateLimit: { perSecond: 1, source: 'https://docs.lambdalabs.com/cloud/rate-limiting/' },
    image: vendor('^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$', 'an image family or image id', 'lambda-stack-24-04'),
    diskGb: false,
    lane: 'region', // observe filters by region; cleanup has nothing to delete
    k3s: 'runs',
    credentials: 'LAMBDA_API_KEY',
    regions: [...LAMBDA_REGIONS, ...LAMBDA_REGIONS_2],
    byDefault: true,
    markets: ON_DEMAND,
  },
  runpod: {
    rateLimit: { perSecond: 2, source: 'https://docs.runpod.io/api-reference-v2/rate-limits' },
    image: CONTAINER,
    diskGb: CONTAINER_DISK,
    lane: 'cloud',
    k3s: 'never',
    credentials: 'RUNPOD_API_KEY',
    byDefault: true,
    markets: ON_DEMAND,
  },
  primeintellect: {
    rateLimit: undocumented(),
    image: vendor('^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$', 'an image name', 'ubuntu_22_cuda_12'),
    diskGb: DISK,
    lane: 'cloud',
    k3s: 'not-promised', // some upstream providers hand out containers
    credentials: 'PRIME_API_KEY',
    byDefault: true,
    markets: ON_DEMAND_AND_SPOT,
  },
  vastai: {
    rateLimit: { perSecond: 2, source: 'https://docs.vast.ai/api-reference/rate-limits-and-errors' },
    image: CONTAINER,
    diskGb: CONTAINER_DISK,
    lane: 'cloud',
    k3s: 'never',
    credentials: 'VAST_API_KEY',
    byDefault: true,
    markets: ON_DEMAND_AND_SPOT,
  },
  hyperstack: {
    rateLimit: undocumented(),
    image: vendor('^[A-Za-z0-9][A-Za-z0-9 ._()-]{0,99}$', 'an image name', 'Ubuntu Server 22.04 LTS R535 CUDA 12.2'),
    diskGb: false,
    lane: 'cloud',
    k3s: 'runs',
    credentials: 'HYPERSTACK_API_KEY',
    byDefault: true,
    markets: ON_DEMAND,
  },
  digitalocean: {
    rateLimit: { perSecond: 4, source: 'https://docs.digitalocean.com/reference/api/ (ratelimit-limit: 5000/hour, 250/minute)' },
    image: vendor('^([a-z0-9][a-z0-9.-]{0,63}|[0-9]{1,12})$', 'an image slug or numeric image id', 'gpu-h100x1-base'),
    diskGb: false,
    lane: 'cloud', // the per-VM firewall is account-wide
    k3s: 'runs',
    credentials: 'DIGITALOCEAN_TOKEN',
    regions: ['nyc2', 'tor1', 'atl1', 'ams3', 'nyc1', 'nyc3', 'sfo3', 'lon1', 'fra1'],
    byDefault: true,
    markets: ON_DEMAND,
  },
  verda: {
    rateLimit: undocumented(),
    image: vendor('^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$', 'an image slug or id', 'ubuntu-24.04-cuda-12.8-open-docker'),
    diskGb: { min: 20, max: 16_384 },
    lane: 'cloud', // startup scripts are global per VM
    k3s: 'runs',
    credentials: 'VERDA_CLIENT_ID and VERDA_CLIENT_SECRET',
    byDefault: true,
    markets: ON_DEMAND_AND_SPOT, // spot instances (src/providers/verda/map.ts)
  },
  massedcompute: {
    rateLimit: undocumented(),
    image: vendor('^[0-9]{1,9}$', 'a numeric image id (GET /images)', '42'),
    diskGb: false,
    lane: 'cloud',
    k3s: 'runs',
    credentials: 'MASSED_COMPUTE_API_KEY',
    byDefault: true,
    markets: ON_DEMAND,
  },
  nebius: {
    rateLimit: undocumented(),
    image: vendor('^[a-z0-9][a-z0-9._-]{0,62}$', 'an image family', 'ubuntu22.04-cuda12'),
    diskGb: DISK,
    lane: 'region', // a project per region
    k3s: 'runs',
    credentials: 'NEBIUS_IAM_TOKEN and NEBIUS_PROJECT_ID (or NEBIUS_PROJECTS)',
    byDefault: true,
    markets: ['on-demand', 'spot', 'reserved'], // preemptible VMs (src/providers/nebius/map.ts); capacity block groups (reservations.ts)
  },
  docker: {
    rateLimit: false,
    image: { ...CONTAINER, format: 'a container image the Docker daemon has (REPO[:TAG])', example: 'gpuprov/sshd:1' },
    diskGb: false,
    lane: 'cloud',
    k3s: 'never',
    credentials: 'DOCKER_HOST',
    byDefault: false,
    markets: ON_DEMAND,
  },
  local: {
    rateLimit: false,
    image: false,
    diskGb: false,
    lane: 'region', // instances and side files labelled by region
    k3s: 'never',
    regions: ['local-a', 'local-b'],
    byDefault: false,
    markets: ON_DEMAND,
  },
};

/**
 * Lanes of clouds that are not in the table: only the test harness's `fake` cloud
 * (test/harness/fake-provider.ts), which runs inside the workflow bundle and so cannot be
 * declared from the test. No adapter registry holds it.
 */
const HARNESS_LANES: Readonly<Record<string, LaneKind>> = { fake: 'region' };

/** True for a cloud this build has an adapter for. */
export function isCloudName(s: string): s is CloudName {
  return (CLOUD_NAMES as readonly string[]).includes(s);
}

/** The row of `cloud`, or undefined for a name no adapter has. */
export function factsOf(cloud: string): CloudFacts | undefined {
  return isCloudName(cloud) ? CLOUD_TABLE[cloud] : undefined;
}

/** `cloud`'s hedge lane; an unknown cloud (other than the harness's) gets the whole cloud, the safe choice. */
export function laneKindOf(cloud: string): LaneKind {
  return factsOf(cloud)?.lane ?? HARNESS_LANES[cloud] ?? 'cloud';
}

/** The clouds whose row passes `ok`, in table order. */
export function cloudsWhere(ok: (f: CloudFacts) => boolean): CloudName[] {
  return CLOUD_NAMES.filter((c) => ok(CLOUD_TABLE[c]));
}

/** `a, b and c`, for help text and messages. */
export function listed(names: readonly string[]): string {
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]!}`;
}

/** The table's part of an adapter's capabilities: `--image`, `--disk-gb`, k3s and the markets. */
export function tableCapabilities(cloud: CloudName): Pick<Capabilities, 'k8s'> & Required<Pick<Capabilities, 'image' | 'diskGb' | 'markets'>> {
  const f = CLOUD_TABLE[cloud];
  return { image: f.image, diskGb: f.diskGb, k8s: f.k3s === 'runs', markets: f.markets };
}
