/**
 * The AWS adapter's configuration: its options, each defaulting from the environment, resolved
 * once into the clients it uses (EC2, Price List, Service Quotas) and its settings. The adapter
 * (./index.ts) only uses what this returns.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { EC2Client, EC2ClientConfig } from '@aws-sdk/client-ec2';
import { ProviderError } from '../../core/errors';
import { stateDir } from '../../paths';
import { deploymentOf, type DeploymentOption } from '../deployment';
import { Ec2Api } from './api';
import { AwsPricing } from './pricing';
import { AwsQuotas } from './quotas';

/** Construction options; every one defaults from the environment (see `fromEnv`). */
export interface AwsProviderOptions extends DeploymentOption {
  env?: NodeJS.ProcessEnv;
  /** Regions to plan in; default `AWS_REGIONS` (comma list), else `AWS_REGION`/`AWS_DEFAULT_REGION`, else us-east-1. */
  regions?: string[];
  /** EC2 endpoint; default `AWS_ENDPOINT_URL_EC2`, else `AWS_ENDPOINT_URL` (tests point it at moto). */
  endpoint?: string;
  /** Explicit credentials; default `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`, else `AWS_PROFILE`, else the SDK chain. */
  credentials?: EC2ClientConfig['credentials'];
  /** Image for every offer; default `AWS_AMI_ID`, else the newest Ubuntu 22.04 / Deep Learning AMI. */
  amiId?: string;
  /** SSH to PrivateIpAddress (worker inside the VPC); default `AWS_USE_PRIVATE_IP=1`. */
  usePrivateIp?: boolean;
  /** Called on every EC2 client made (tests add middleware). */
  configureClient?: (client: EC2Client) => void;
  /** MaxResults of paginated Describe calls. */
  pageSize?: number;
  /**
   * Price List endpoint; default `AWS_ENDPOINT_URL_PRICING`, else AWS's, but none (catalog prices
   * only, as with `false`) when EC2 is overridden (moto serves no Price List; a test never reaches AWS).
   */
  pricingEndpoint?: string | false;
  /** Where live prices are cached; default `<state dir>/prices/aws.json`. */
  priceCacheFile?: string;
  /**
   * Service Quotas endpoint for the plan's vCPU quota pre-check; default `AWS_ENDPOINT_URL_SERVICE_QUOTAS`,
   * else AWS's, but none (no pre-check, as with `false`) when EC2 is overridden (moto serves no ec2 quotas).
   */
  quotasEndpoint?: string | false;
  /** How long a quota limit read is reused (ms); default 10 minutes. */
  quotaCacheMs?: number;
}

/** What the adapter runs with. */
export interface AwsConfig {
  deployment: string;
  api: Ec2Api;
  regions: string[];
  amiId: string | undefined;
  usePrivateIp: boolean;
  /** Absent: catalog prices only. */
  pricing: AwsPricing | undefined;
  /** Absent: no quota pre-check. */
  quotas: AwsQuotas | undefined;
}

function credentialsFileOf(env: NodeJS.ProcessEnv): string {
  return env.AWS_SHARED_CREDENTIALS_FILE ?? join(env.HOME ?? homedir(), '.aws', 'credentials');
}

/** Keys, a profile or `~/.aws/credentials`; a key id without its secret is not credentials. */
export function hasCredentials(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.AWS_ACCESS_KEY_ID || env.AWS_PROFILE || existsSync(credentialsFileOf(env)));
}

/**
 * The endpoint of a service beside EC2 (Price List, Service Quotas): the option, else its
 * environment variable, else AWS's own (undefined) — but none (`false`) when EC2 itself is
 * overridden, so a test against an EC2 double never reaches AWS.
 */
function besideEc2(option: string | false | undefined, fromEnv: string | undefined, ec2Endpoint: string | undefined): string | false | undefined {
  return option ?? fromEnv ?? (ec2Endpoint ? false : undefined);
}

/** Resolve the options and the environment; missing or half-set credentials throw `Credentials`. */
export function awsConfig(opts: AwsProviderOptions): AwsConfig {
  const env = opts.env ?? process.env;
  if (!opts.credentials && !hasCredentials(env)) {
    throw new ProviderError(
      'Credentials',
      'AWS credentials not found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE, or write ~/.aws/credentials',
    );
  }
  if (!opts.credentials && env.AWS_ACCESS_KEY_ID && !env.AWS_SECRET_ACCESS_KEY) {
    throw new ProviderError('Credentials', 'AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not: set AWS_SECRET_ACCESS_KEY');
  }
  const credentials =
    opts.credentials ??
    (env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY
      ? {
          accessKeyId: env.AWS_ACCESS_KEY_ID,
          secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
          ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
        }
      : undefined);
  /** What every client shares: the credentials, else the profile. */
  const auth = { ...(credentials ? { credentials } : {}), ...(env.AWS_PROFILE ? { profile: env.AWS_PROFILE } : {}) };
  const endpoint = opts.endpoint ?? env.AWS_ENDPOINT_URL_EC2 ?? env.AWS_ENDPOINT_URL;
  const listed = (env.AWS_REGIONS ?? '')
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  const pricingEndpoint = besideEc2(opts.pricingEndpoint, env.AWS_ENDPOINT_URL_PRICING, endpoint);
  const quotasEndpoint = besideEc2(opts.quotasEndpoint, env.AWS_ENDPOINT_URL_SERVICE_QUOTAS, endpoint);
  return {
    deployment: deploymentOf(opts),
    api: new Ec2Api({
      ...(endpoint ? { endpoint } : {}),
      ...auth,
      ...(opts.configureClient ? { configureClient: opts.configureClient } : {}),
      ...(opts.pageSize ? { pageSize: opts.pageSize } : {}),
    }),
    regions: opts.regions ?? (listed.length > 0 ? listed : [env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'us-east-1']),
    amiId: opts.amiId ?? (env.AWS_AMI_ID || undefined),
    usePrivateIp: opts.usePrivateIp ?? env.AWS_USE_PRIVATE_IP === '1',
    pricing:
      pricingEndpoint === false
        ? undefined
        : new AwsPricing({
            ...(pricingEndpoint ? { endpoint: pricingEndpoint } : {}),
            ...auth,
            cacheFile: opts.priceCacheFile ?? join(stateDir(env), 'prices', 'aws.json'),
          }),
    quotas:
      quotasEndpoint === false
        ? undefined
        : new AwsQuotas({
            ...(quotasEndpoint ? { endpoint: quotasEndpoint } : {}),
            ...auth,
            ...(opts.quotaCacheMs !== undefined ? { cacheMs: opts.quotaCacheMs } : {}),
          }),
  };
}
