/**
 * An isolated home for the embedded default: its own HOME, state dir and free ports, the run's
 * temporal CLI, no TEMPORAL_ADDRESS. Every sandbox made here is stopped and removed by
 * `removeEmbeddedSandboxes` (call it from `afterAll`).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePort } from '../../src/ports';
import { stopEmbedded } from '../../src/server/embedded';

const dirs: string[] = [];
const envs: NodeJS.ProcessEnv[] = [];

export async function embeddedSandbox(prefix: string, cliPath: string): Promise<NodeJS.ProcessEnv> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `gpuprov-${prefix}-`));
  dirs.push(dir);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: dir,
    GPUPROV_STATE_DIR: path.join(dir, 'state'),
    GPUPROV_EMBEDDED_PORT: String(await freePort()),
    GPUPROV_EMBEDDED_UI_PORT: String(await freePort()),
    TEMPORAL_CLI_PATH: cliPath,
  };
  delete env.TEMPORAL_ADDRESS;
  envs.push(env);
  return env;
}

export async function removeEmbeddedSandboxes(): Promise<void> {
  for (const env of envs.splice(0)) await stopEmbedded(env);
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
}
