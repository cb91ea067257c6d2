/**
 * Where the GCP adapter's settings come from: Application Default Credentials and the
 * usual project variables, plus gpuprov's own GCP_* overrides.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { DeploymentOption } from '../deployment';

/** The ADC file: `GOOGLE_APPLICATION_CREDENTIALS`, else gcloud's application-default file. */
export function findAdcFile(env: NodeJS.ProcessEnv): string | undefined {
  if (env.GOOGLE_APPLICATION_CREDENTIALS) return env.GOOGLE_APPLICATION_CREDENTIALS;
  const home = env.HOME ?? env.USERPROFILE ?? homedir();
  const dir = env.CLOUDSDK_CONFIG ?? (process.platform === 'win32' && env.APPDATA ? join(env.APPDATA, 'gcloud') : join(home, '.config', 'gcloud'));
  const file = join(dir, 'application_default_credentials.json');
  return existsSync(file) ? file : undefined;
}

/** `GOOGLE_CLOUD_PROJECT` / `GCLOUD_PROJECT`, else the project named in the ADC file (never its secrets). */
export function findProject(env: NodeJS.ProcessEnv, adcFile: string | undefined): string | undefined {
  const fromEnv = env.GOOGLE_CLOUD_PROJECT ?? env.GCLOUD_PROJECT;
  if (fromEnv) return fromEnv;
  if (!adcFile) return undefined;
  try {
    const json = JSON.parse(readFileSync(adcFile, 'utf8')) as { project_id?: unknown; quota_project_id?: unknown };
    const p = json.project_id ?? json.quota_project_id;
    return typeof p === 'string' && p ? p : undefined;
  } catch {
    return undefined;
  }
}

/** `GCP_REGIONS=us-central1,europe-west4` → list; default us-central1. */
export function parseRegions(raw: string | undefined): string[] {
  const list = (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return list.length ? list : ['us-central1'];
}

/** Settings of the GCP adapter (./index.ts); `fromEnv` fills them from the environment. */
export interface GcpOptions extends DeploymentOption {
  /** Project id (`GOOGLE_CLOUD_PROJECT` / `GCLOUD_PROJECT`). */
  project?: string;
  /** ADC / service-account JSON file (`GOOGLE_APPLICATION_CREDENTIALS` or gcloud's ADC file). */
  keyFilename?: string;
  /** Compute base URL override (`GCP_COMPUTE_ENDPOINT`); without a key file no auth is sent. */
  endpoint?: string;
  /** Regions to plan in (`GCP_REGIONS`, default us-central1). */
  regions?: string[];
  /** Boot image family and its project for CPU offers (`GCP_IMAGE_FAMILY`, `GCP_IMAGE_PROJECT`). */
  imageFamily?: string;
  imageProject?: string;
  /**
   * Boot image family and its project for GPU offers (`GCP_GPU_IMAGE_FAMILY`,
   * `GCP_GPU_IMAGE_PROJECT`): an image with the NVIDIA driver, default `GPU_IMAGE` (./index.ts).
   */
  gpuImageFamily?: string;
  gpuImageProject?: string;
  /** How long create waits on the insert operation within its attempt (default 60 s). */
  insertWaitMs?: number;
  /** VPC network name (default `default`). */
  network?: string;
  /** `maxResults` per list page. */
  pageSize?: number;
  /**
   * Cloud Billing Catalog base URL (`GCP_BILLING_ENDPOINT`); default Google's, but none (table
   * prices only, as with `false`) when Compute is overridden (a test never reaches Google).
   */
  billingEndpoint?: string | false;
  /** Where live prices are cached (`fromEnv`: `<state dir>/prices/gcp.json`); default memory only. */
  priceCacheFile?: string;
}
