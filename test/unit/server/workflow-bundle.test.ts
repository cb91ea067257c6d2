/** The on-disk workflow bundle cache: keyed by the sources, reused, safe across processes. */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { prebuiltWorkflowBundle, PREBUILT_BUNDLES, workflowBundleKey, workflowBundlePath, type BundleBuilder } from '../../../src/server/workflow-bundle';

const run = promisify(execFile);
const MODULE = path.join(__dirname, '..', '..', '..', 'src', 'server', 'workflow-bundle.ts');

describe('workflow bundle cache', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'gpuprov-bundle-test-'));
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  /** A source tree of its own (the real src/ may be edited while tests run) and a cache dir. */
  const fixture = (name: string): { srcDir: string; lockFile: string; env: NodeJS.ProcessEnv; bundles: string } => {
    const dir = path.join(root, name);
    const srcDir = path.join(dir, 'src');
    fs.mkdirSync(path.join(srcDir, 'workflows'), { recursive: true });
    fs.writeFileSync(path.join(srcDir, 'workflows', 'index.ts'), "export * from './vm';\n");
    fs.writeFileSync(path.join(srcDir, 'workflows', 'vm.ts'), 'export async function vmWorkflow(): Promise<void> {}\n');
    fs.writeFileSync(path.join(srcDir, 'errors.ts'), 'export const A = 1;\n');
    const lockFile = path.join(dir, 'package-lock.json');
    fs.writeFileSync(lockFile, '{"lockfileVersion":3}');
    const cache = path.join(dir, 'cache');
    return { srcDir, lockFile, env: { GPUPROV_CACHE_DIR: cache }, bundles: path.join(cache, 'bundles') };
  };

  const counting = (): { build: BundleBuilder; calls: () => number } => {
    let n = 0;
    return {
      calls: () => n,
      build: async (workflowsPath, out) => {
        n += 1;
        fs.writeFileSync(out, `// bundle of ${workflowsPath}\n`);
        await new Promise((r) => setTimeout(r, 50));
        fs.appendFileSync(out, 'globalThis.done = true;\n');
      },
    };
  };

  it('the key changes with any source file, the lock file and the workflows module, and only then', () => {
    const f = fixture('key');
    const key = (): string => workflowBundleKey({ srcDir: f.srcDir, lockFile: f.lockFile });
    const k0 = key();
    expect(k0).toMatch(/^[0-9a-f]{32}$/);
    expect(key()).toBe(k0);

    const errors = path.join(f.srcDir, 'errors.ts');
    fs.writeFileSync(errors, 'export const A = 2;\n');
    const k1 = key();
    expect(k1).not.toBe(k0);
    fs.writeFileSync(errors, 'export const A = 1;\n');
    expect(key()).toBe(k0);

    fs.writeFileSync(path.join(f.srcDir, 'new.ts'), 'export {};\n');
    expect(key()).not.toBe(k0);
    fs.rmSync(path.join(f.srcDir, 'new.ts'));

    fs.writeFileSync(f.lockFile, '{"lockfileVersion":3,"x":1}');
    expect(key()).not.toBe(k0);
    fs.writeFileSync(f.lockFile, '{"lockfileVersion":3}');

    expect(workflowBundleKey({ srcDir: f.srcDir, lockFile: f.lockFile, workflowsPath: path.join(f.srcDir, 'workflows', 'vm.ts') })).not.toBe(k0);
    // Not sources: declarations, source maps and notes do not change the bundle.
    fs.writeFileSync(path.join(f.srcDir, 'errors.d.ts'), 'export declare const A: number;\n');
    fs.writeFileSync(path.join(f.srcDir, 'errors.js.map'), '{}');
    fs.writeFileSync(path.join(f.srcDir, 'NOTES.md'), 'hi');
    expect(key()).toBe(k0);
  });

  it('builds once, then reuses the cached file; a source change builds a new one', async () => {
    const f = fixture('reuse');
    const b = counting();
    const o = { srcDir: f.srcDir, lockFile: f.lockFile, env: f.env, build: b.build };
    const first = await workflowBundlePath(o);
    expect(b.calls()).toBe(1);
    expect(path.dirname(first)).toBe(f.bundles);
    expect(path.basename(first)).toBe(`${workflowBundleKey(o)}.js`);
    expect(fs.readFileSync(first, 'utf8')).toContain('globalThis.done = true;');

    expect(await workflowBundlePath(o)).toBe(first);
    expect(b.calls()).toBe(1);

    fs.writeFileSync(path.join(f.srcDir, 'workflows', 'vm.ts'), 'export async function vmWorkflow(): Promise<number> { return 1; }\n');
    const second = await workflowBundlePath(o);
    expect(second).not.toBe(first);
    expect(b.calls()).toBe(2);
    expect(fs.readdirSync(f.bundles).filter((n) => !n.endsWith('.js'))).toEqual([]); // no temp or lock files left
  });

  it('concurrent calls in one process share one build', async () => {
    const f = fixture('same-process');
    const b = counting();
    const o = { srcDir: f.srcDir, lockFile: f.lockFile, env: f.env, build: b.build };
    const paths = await Promise.all([workflowBundlePath(o), workflowBundlePath(o), workflowBundlePath(o)]);
    expect(new Set(paths).size).toBe(1);
    expect(b.calls()).toBe(1);
  });

  it('a failed build leaves nothing behind, and the next call builds again', async () => {
    const f = fixture('failure');
    const o = { srcDir: f.srcDir, lockFile: f.lockFile, env: f.env };
    await expect(
      workflowBundlePath({
        ...o,
        build: async (_wf, out) => {
          fs.writeFileSync(out, 'half a bundle');
          throw new Error('webpack exploded');
        },
      }),
    ).rejects.toThrow('webpack exploded');
    expect(fs.readdirSync(f.bundles)).toEqual([]);
    const b = counting();
    await workflowBundlePath({ ...o, build: b.build });
    expect(b.calls()).toBe(1);
  });

  it('two processes at once: one builds, both get the same complete file', async () => {
    const f = fixture('two-processes');
    const builds = path.join(root, 'two-processes', 'builds.log');
    const script = path.join(root, 'two-processes', 'call.ts');
    fs.writeFileSync(
      script,
      `import * as fs from 'node:fs';
import { workflowBundlePath } from ${JSON.stringify(MODULE)};
workflowBundlePath({
  srcDir: ${JSON.stringify(f.srcDir)}, lockFile: ${JSON.stringify(f.lockFile)}, env: { GPUPROV_CACHE_DIR: ${JSON.stringify(f.env.GPUPROV_CACHE_DIR)} },
  build: async (_wf, out) => {
    fs.appendFileSync(${JSON.stringify(builds)}, process.pid + '\\n');
    fs.writeFileSync(out, 'first half;');
    await new Promise((r) => setTimeout(r, 1500));
    fs.appendFileSync(out, 'second half;');
  },
}).then((p) => process.stdout.write(p + '\\n' + fs.readFileSync(p, 'utf8')));
`,
    );
    const tsx = pathToFileURL(require.resolve('tsx')).href;
    const call = (): Promise<{ stdout: string }> => run(process.execPath, ['--import', tsx, script], { timeout: 60_000 });
    const [a, b] = await Promise.all([call(), call()]);
    expect(a.stdout).toBe(b.stdout);
    const [file, content] = a.stdout.split('\n');
    expect(content).toBe('first half;second half;');
    expect(path.dirname(file!)).toBe(f.bundles);
    expect(fs.readFileSync(builds, 'utf8').trim().split('\n')).toHaveLength(1);
    expect(fs.readdirSync(f.bundles)).toEqual([path.basename(file!)]);
  });

  it("bundles gpuprov's real workflows in a child process", async () => {
    const cache = path.join(root, 'real');
    const file = await workflowBundlePath({ env: { GPUPROV_CACHE_DIR: cache } });
    expect(path.dirname(file)).toBe(path.join(cache, 'bundles'));
    const code = fs.readFileSync(file, 'utf8');
    expect(code).toContain('vmWorkflow');
    expect(code).toContain('__TEMPORAL__');
  }, 180_000);

  it('a built package uses its prebuilt bundles; sources never do, even with a dist/ beside them', () => {
    const dist = path.join(root, 'pkg', 'dist');
    fs.mkdirSync(path.join(dist, 'src', 'workflows'), { recursive: true });
    fs.writeFileSync(path.join(dist, 'src', 'workflows', 'index.js'), '');
    const srcDir = path.join(dist, 'src');
    expect(prebuiltWorkflowBundle(false, srcDir)).toBeUndefined(); // not built yet: bundle from the sources
    for (const f of Object.values(PREBUILT_BUNDLES)) fs.writeFileSync(path.join(dist, f), '// bundle');
    expect(prebuiltWorkflowBundle(false, srcDir)).toBe(path.join(dist, 'workflow-bundle.js'));
    expect(prebuiltWorkflowBundle(true, srcDir)).toBe(path.join(dist, 'workflow-bundle-otel.js'));
    // A checkout: src/workflows/index.ts beside a bundle in its parent is still run from source.
    fs.writeFileSync(path.join(srcDir, 'workflows', 'index.ts'), '');
    expect(prebuiltWorkflowBundle(false, srcDir)).toBeUndefined();
  });
});
