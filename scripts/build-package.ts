/**
 * `npm run build` (and `prepack`): what an installed package runs, under `dist/`:
 *   - `dist/src/**` — the compiled sources (tsc -p tsconfig.build.json) with their `.d.ts`, plus
 *     every non-TypeScript file they read at runtime (install-k3s.sh, Nebius protos), copied beside them;
 *   - `dist/workflow-bundle.js`, `dist/workflow-bundle-otel.js` — gpuprov's workflow code prebuilt
 *     by the SDK's `bundleWorkflowCode` (without and with the OpenTelemetry workflow interceptor),
 *     which a compiled worker loads instead of bundling (src/server/workflow-bundle.ts).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildInChildProcess, defaultInterceptorModules, PREBUILT_BUNDLES } from '../src/server/workflow-bundle';
import { otelWorkflowInterceptorModule } from '../src/telemetry';

const ROOT = path.join(__dirname, '..');
const DIST = path.join(ROOT, 'dist');

/** Copies every file under `from` that tsc does not emit (not `.ts`) into the same place under `to`. */
function copyAssets(from: string, to: string): number {
  let n = 0;
  for (const e of fs.readdirSync(from, { withFileTypes: true })) {
    const src = path.join(from, e.name);
    if (e.isDirectory()) n += copyAssets(src, path.join(to, e.name));
    else if (e.isFile() && !e.name.endsWith('.ts')) {
      fs.mkdirSync(to, { recursive: true });
      fs.copyFileSync(src, path.join(to, e.name));
      fs.chmodSync(path.join(to, e.name), fs.statSync(src).mode);
      n++;
    }
  }
  return n;
}

async function main(): Promise<void> {
  fs.rmSync(DIST, { recursive: true, force: true });
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', path.join(ROOT, 'tsconfig.build.json')], { stdio: 'inherit' });
  const assets = copyAssets(path.join(ROOT, 'src'), path.join(DIST, 'src'));
  const srcDir = path.join(DIST, 'src');
  const workflows = path.join(srcDir, 'workflows', 'index.js');
  const modules = defaultInterceptorModules(srcDir);
  await Promise.all([
    buildInChildProcess(workflows, path.join(DIST, PREBUILT_BUNDLES.plain), modules),
    buildInChildProcess(workflows, path.join(DIST, PREBUILT_BUNDLES.tracing), [...modules, otelWorkflowInterceptorModule()]),
  ]);
  const size = (f: string): string => `${(fs.statSync(path.join(DIST, f)).size / 1e6).toFixed(1)} MB`;
  process.stderr.write(
    `gpuprov build: dist/src (${assets} assets copied), dist/${PREBUILT_BUNDLES.plain} (${size(PREBUILT_BUNDLES.plain)}), dist/${PREBUILT_BUNDLES.tracing} (${size(PREBUILT_BUNDLES.tracing)})\n`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`gpuprov build failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
