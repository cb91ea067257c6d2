/**
 * vitest globalSetup: ONE Temporal dev server for the whole run, on free ports (never
 * 7233/8233) with a temporary SQLite file and gpuprov's search attributes registered.
 * Test files read its address with `inject('temporalAddress')` (see `temporal.ts`).
 * When the temporal CLI cannot be obtained: GPUPROV_REQUIRE_ALL=1 fails the run, otherwise the
 * address is empty and server-needing suites skip.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TestProject } from 'vitest/node';
import { freePort } from '../../src/ports';
import { startDevServer, type DevServer } from '../../src/server/dev-server';
import { obtainTemporalCli } from '../../src/server/temporal-cli';
import { scanServerHistories, type ScanResult } from './history-scan';

declare module 'vitest' {
  export interface ProvidedContext {
    /** `127.0.0.1:<port>` of the run's dev server, or '' when none could be started. */
    temporalAddress: string;
    temporalNamespace: string;
    temporalUiUrl: string;
    temporalDbFile: string;
    /** Path of the temporal CLI binary, or ''. */
    temporalCliPath: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const required = process.env.GPUPROV_REQUIRE_ALL === '1';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gpuprov-devserver-'));
  const dbFile = path.join(dir, 'temporal.db');
  let server: DevServer | undefined;
  let cliPath = '';
  try {
    cliPath = (await obtainTemporalCli()).path;
    const [port, uiPort] = [await freePort(), await freePort()];
    server = await startDevServer({ cliPath, port, uiPort, dbFile, namespace: 'default', logFile: path.join(dir, 'server.log') });
  } catch (err) {
    if (required) {
      fs.rmSync(dir, { recursive: true, force: true });
      throw err;
    }
    process.stderr.write(
      `\ngpuprov test harness: no Temporal dev server (${(err as Error).message.split('\n')[0] ?? ''}); suites that need it are skipped. Set GPUPROV_REQUIRE_ALL=1 to fail instead.\n`,
    );
  }
  project.provide('temporalAddress', server?.address ?? '');
  project.provide('temporalNamespace', server?.namespace ?? 'default');
  project.provide('temporalUiUrl', server?.uiUrl ?? '');
  project.provide('temporalDbFile', server ? dbFile : '');
  project.provide('temporalCliPath', cliPath);
  return async () => {
    // No secret in any history (docs/ARCHITECTURE.md, "Secrets never enter a history"). Every history this run's tests produced is scanned.
    let scan: ScanResult | undefined;
    if (server) scan = await scanServerHistories(server.address, server.namespace);
    await server?.stop();
    if (scan) {
      process.stderr.write(`\ngpuprov test harness: scanned ${scan.workflows} workflow histories for secrets: ${scan.hits.length} with findings\n`);
      if (scan.hits.length > 0) {
        fs.rmSync(dir, { recursive: true, force: true });
        // vitest reports a teardown error but keeps its exit code: make the run fail.
        process.exitCode = 1;
        throw new Error(`secret material in workflow history: ${scan.hits.map((h) => `${h.workflowId} (${h.found.join(', ')})`).join('; ')}`);
      }
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
}
