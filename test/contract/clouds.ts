/**
 * The HTTP clouds with a published vendor client: the calls our adapter makes (by method and
 * path pattern), how to start a fresh fixture with our adapter pointed at it, and what the
 * vendor's driver needs to reach the same fixture.
 */
import type { CloudProvider, ResourceRequest } from '../../src/core/provider';
import type { HttpFixture } from '../fixtures/http-fixture';
import { API_KEY as VAST_KEY } from '../fixtures/vastai/server';
import { startVastaiDouble } from '../providers/vastai/double';
import { startVerdaDouble } from '../providers/verda/double';
import { startHyperstackDouble } from '../providers/hyperstack/double';
import { API_KEY as LAMBDA_KEY } from '../fixtures/lambda/server';
import { startLambdaDouble } from '../providers/lambda/double';
import { API_KEY as PRIME_KEY } from '../fixtures/primeintellect/server';
import { startPrimeIntellectDouble } from '../providers/primeintellect/double';
import { startDigitalOceanDouble } from '../providers/digitalocean/double';
import { startGcpDouble } from '../providers/gcp/double';
import type { CallRoute, ShapeOptions } from './shapes';

/** A fresh fixture and our adapter pointed at it. */
export interface ContractEnv {
  provider: CloudProvider;
  http: HttpFixture;
  /** Where the vendor's client is pointed (default: the fixture's root). */
  baseUrl?: string;
  /** What the vendor's client needs to authenticate at the fixture. */
  credentials: Record<string, string>;
  close(): Promise<void>;
}

export interface HttpContract {
  cloud: string;
  /** The vendor's client on PyPI (pinned in requirements.txt). */
  client: string;
  routes: CallRoute[];
  shape?: ShapeOptions;
  /** A request our adapter plans at the fixture. */
  request: ResourceRequest;
  /** `--image` (and `--disk-gb` where the cloud sizes disks, src/core/image-disk.ts) for a second life whose create carries them. */
  imageDisk?: { image: string; diskGb?: number };
  /** The cloud sells spot: one more life asks for it (`spot: 'only'`), so the spot plan and create are diffed too. */
  spot?: boolean;
  start(): Promise<ContractEnv>;
}

const r = (call: string, method: string, pattern: string): CallRoute => ({ call, method, pattern });

export const HTTP_CONTRACTS: HttpContract[] = [
  {
    cloud: 'vastai',
    client: 'vastai',
    routes: [
      r('search', 'POST', '/api/v0/bundles'),
      r('ssh-keys', 'GET', '/api/v0/ssh'),
      r('add-ssh-key', 'POST', '/api/v0/ssh'),
      r('create', 'PUT', '/api/v0/asks/:id'),
      r('list', 'GET', '/api/v1/instances'),
      r('delete', 'DELETE', '/api/v0/instances/:id'),
    ],
    // `env` is a map of docker args to values: its keys are data, not fields.
    shape: { opaque: ['body.env'], values: ['body.type', 'body.runtype', 'body.client_id'] },
    // US: the cheapest ask there has direct ports, so create asks for direct SSH.
    request: { vmName: 'contract', gpu: { model: 'RTX4090', count: 1 }, regions: ['US'], k8s: false },
    imageDisk: { image: 'pytorch/pytorch:2.4.0-cuda12.4-cudnn9-runtime', diskGb: 80 },
    start: async () => {
      const d = await startVastaiDouble();
      return { provider: d.provider, http: d.server.http, credentials: { apiKey: VAST_KEY }, close: () => d.close() };
    },
  },
  {
    cloud: 'verda',
    client: 'verda',
    routes: [
      r('token', 'POST', '/oauth2/token'),
      r('instance-types', 'GET', '/instance-types'),
      r('availability', 'GET', '/instance-availability'),
      r('ssh-keys', 'GET', '/sshkeys'),
      r('add-ssh-key', 'POST', '/sshkeys'),
      r('scripts', 'GET', '/scripts'),
      r('add-script', 'POST', '/scripts'),
      r('delete-scripts', 'DELETE', '/scripts'),
      r('create', 'POST', '/instances'),
      r('list', 'GET', '/instances'),
      r('get', 'GET', '/instances/:id'),
      r('delete', 'PUT', '/instances'),
    ],
    shape: { values: ['body.action', 'body.grant_type', 'query.isSpot', 'query.currency', 'body.is_spot'] },
    request: { vmName: 'contract', gpu: { model: 'H100', count: 1 }, k8s: true },
    imageDisk: { image: 'ubuntu-24.04-cuda-12.8-open-docker', diskGb: 120 },
    spot: true,
    start: async () => {
      const d = await startVerdaDouble();
      return {
        provider: d.provider,
        http: d.server.http,
        credentials: { clientId: d.server.clientId, clientSecret: d.server.clientSecret },
        close: () => d.close(),
      };
    },
  },
  {
    cloud: 'hyperstack',
    client: 'hyperstack',
    routes: [
      r('flavors', 'GET', '/core/flavors'),
      r('pricebook', 'GET', '/pricebook'),
      r('environments', 'GET', '/core/environments'),
      r('create-environment', 'POST', '/core/environments'),
      r('keypairs', 'GET', '/core/keypairs'),
      r('create-keypair', 'POST', '/core/keypairs'),
      r('create', 'POST', '/core/virtual-machines'),
      r('list', 'GET', '/core/virtual-machines'),
      r('get', 'GET', '/core/virtual-machines/:id'),
      r('delete', 'DELETE', '/core/virtual-machines/:id'),
    ],
    shape: {
      values: ['body.assign_floating_ip', 'body.count', 'body.security_rules[].direction', 'body.security_rules[].protocol', 'body.security_rules[].ethertype'],
    },
    request: { vmName: 'contract', gpu: { model: 'H100', count: 1 }, k8s: true },
    imageDisk: { image: 'Ubuntu Server 22.04 LTS R535 CUDA 12.2' },
    start: async () => {
      const d = await startHyperstackDouble();
      return { provider: d.provider, http: d.server.http, credentials: { apiKey: d.server.apiKey }, close: () => d.close() };
    },
  },
  {
    cloud: 'lambda',
    client: 'lambda-cloud-api-client',
    routes: [
      r('instance-types', 'GET', '/api/v1/instance-types'),
      r('ssh-keys', 'GET', '/api/v1/ssh-keys'),
      r('add-ssh-key', 'POST', '/api/v1/ssh-keys'),
      r('launch', 'POST', '/api/v1/instance-operations/launch'),
      r('list', 'GET', '/api/v1/instances'),
      r('get', 'GET', '/api/v1/instances/:id'),
      r('terminate', 'POST', '/api/v1/instance-operations/terminate'),
    ],
    request: { vmName: 'contract', gpu: { model: 'A10', count: 1 }, k8s: true },
    imageDisk: { image: 'lambda-stack-24-04' },
    start: async () => {
      const d = await startLambdaDouble();
      return { provider: d.provider, http: d.server.http, baseUrl: d.server.url, credentials: { apiKey: LAMBDA_KEY }, close: () => d.close() };
    },
  },
  {
    cloud: 'primeintellect',
    client: 'prime',
    routes: [
      r('availability', 'GET', '/api/v1/availability/gpus'),
      r('ssh-keys', 'GET', '/api/v1/ssh_keys'),
      r('add-ssh-key', 'POST', '/api/v1/ssh_keys'),
      r('create', 'POST', '/api/v1/pods'),
      r('list', 'GET', '/api/v1/pods'),
      r('status', 'GET', '/api/v1/pods/status'),
      r('get', 'GET', '/api/v1/pods/:id'),
      r('delete', 'DELETE', '/api/v1/pods/:id'),
    ],
    shape: { values: ['body.provider.type'] },
    request: { vmName: 'contract', gpu: { model: 'H100', count: 1 }, k8s: true },
    imageDisk: { image: 'ubuntu_22_cuda_12', diskGb: 120 },
    start: async () => {
      const d = await startPrimeIntellectDouble();
      return { provider: d.provider, http: d.server.http, credentials: { apiKey: PRIME_KEY }, close: () => d.close() };
    },
  },
  {
    cloud: 'digitalocean',
    client: 'pydo',
    routes: [
      r('sizes', 'GET', '/v2/sizes'),
      r('ssh-keys', 'GET', '/v2/account/keys'),
      r('add-ssh-key', 'POST', '/v2/account/keys'),
      r('firewalls', 'GET', '/v2/firewalls'),
      r('create-tag', 'POST', '/v2/tags'),
      r('create-firewall', 'POST', '/v2/firewalls'),
      r('delete-firewall', 'DELETE', '/v2/firewalls/:id'),
      r('create', 'POST', '/v2/droplets'),
      r('list', 'GET', '/v2/droplets'),
      r('get', 'GET', '/v2/droplets/:id'),
      r('delete', 'DELETE', '/v2/droplets/:id'),
    ],
    shape: { values: ['query.type'] },
    request: { vmName: 'contract', gpu: { model: 'H100', count: 1 }, k8s: true },
    imageDisk: { image: 'gpu-h100x1-base' },
    start: async () => {
      const d = await startDigitalOceanDouble();
      return { provider: d.provider, http: d.server.http, credentials: { token: d.server.token }, close: () => d.close() };
    },
  },
  {
    cloud: 'gcp',
    client: 'google-cloud-compute',
    routes: [
      r('zones', 'GET', '/compute/v1/projects/:project/zones'),
      r('accelerators', 'GET', '/compute/v1/projects/:project/aggregated/acceleratorTypes'),
      r('image-family', 'GET', '/compute/v1/projects/:project/global/images/family/:family'),
      r('firewall', 'GET', '/compute/v1/projects/:project/global/firewalls/:name'),
      r('create-firewall', 'POST', '/compute/v1/projects/:project/global/firewalls'),
      r('delete-firewall', 'DELETE', '/compute/v1/projects/:project/global/firewalls/:name'),
      r('global-operation', 'GET', '/compute/v1/projects/:project/global/operations/:operation'),
      r('create', 'POST', '/compute/v1/projects/:project/zones/:zone/instances'),
      r('list', 'GET', '/compute/v1/projects/:project/zones/:zone/instances'),
      r('get', 'GET', '/compute/v1/projects/:project/zones/:zone/instances/:instance'),
      r('delete', 'DELETE', '/compute/v1/projects/:project/zones/:zone/instances/:instance'),
      r('operation', 'GET', '/compute/v1/projects/:project/zones/:zone/operations/:operation'),
      r('operation-wait', 'POST', '/compute/v1/projects/:project/zones/:zone/operations/:operation/wait'),
    ],
    // `labels` and `metadata` keys are data.
    shape: { opaque: ['body.labels'] },
    request: { vmName: 'contract', gpu: { model: 'T4', count: 1 }, regions: ['us-central1'], k8s: true },
    imageDisk: { image: 'projects/ubuntu-os-cloud/global/images/family/ubuntu-2204-lts', diskGb: 120 },
    start: async () => {
      const d = await startGcpDouble();
      return { provider: d.provider, http: d.server.http, credentials: { project: d.server.project }, close: () => d.close() };
    },
  },
];
