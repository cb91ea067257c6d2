/**
 * What the CLI knows about clouds without asking the worker: names, regions it can validate up
 * front, and which clouds cannot run k3s. The worker's `plan` remains the authority on offers.
 */

/** Every cloud an adapter exists for, in the default preference order of the docs. */
export const CLOUDS = [
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
export type CloudId = (typeof CLOUDS)[number];

/** Clouds whose instances are containers or processes: no k3s there. */
export const NO_K8S: readonly CloudId[] = ['local', 'docker', 'runpod', 'vastai'];

/** Regions known per cloud (for up-front validation); a cloud missing here accepts any well-formed region. */
export const KNOWN_REGIONS: Partial<Record<CloudId, readonly string[]>> = {
  local: ['local-a', 'local-b'],
  aws: [
    'us-east-1',
    'us-east-2',
    'us-west-1',
    'us-west-2',
    'ca-central-1',
    'eu-west-1',
    'eu-west-2',
    'eu-west-3',
    'eu-central-1',
    'eu-north-1',
    'ap-south-1',
    'ap-northeast-1',
    'ap-northeast-2',
    'ap-southeast-1',
    'ap-southeast-2',
    'sa-east-1',
  ],
  gcp: ['us-central1', 'us-east1', 'us-east4', 'us-west1', 'us-west4', 'europe-west1', 'europe-west4', 'asia-east1', 'asia-northeast1', 'asia-southeast1'],
  lambda: [
    'us-east-1',
    'us-east-3',
    'us-west-1',
    'us-west-2',
    'us-west-3',
    'us-south-1',
    'us-south-2',
    'us-south-3',
    'us-midwest-1',
    'europe-central-1',
    'asia-south-1',
    'asia-northeast-1',
    'asia-northeast-2',
    'me-west-1',
  ],
  digitalocean: ['nyc2', 'tor1', 'atl1', 'ams3', 'nyc1', 'nyc3', 'sfo3', 'lon1', 'fra1'],
};

/** The worker's variables that hold each cloud's credentials (what to fix when a cloud refuses them). */
export const CREDENTIAL_VARS: Partial<Record<CloudId, string>> = {
  aws: 'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE)',
  gcp: 'GOOGLE_APPLICATION_CREDENTIALS (a service-account key file) and GOOGLE_CLOUD_PROJECT',
  lambda: 'LAMBDA_API_KEY',
  runpod: 'RUNPOD_API_KEY',
  primeintellect: 'PRIME_API_KEY',
  vastai: 'VAST_API_KEY',
  hyperstack: 'HYPERSTACK_API_KEY',
  digitalocean: 'DIGITALOCEAN_TOKEN',
  verda: 'VERDA_CLIENT_ID and VERDA_CLIENT_SECRET',
  massedcompute: 'MASSED_COMPUTE_API_KEY',
  nebius: 'NEBIUS_IAM_TOKEN and NEBIUS_PROJECT_ID (or NEBIUS_PROJECTS)',
  docker: 'DOCKER_HOST',
};

export { distance, didYouMean } from '../core/did-you-mean';
