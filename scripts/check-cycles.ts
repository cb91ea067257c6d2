/**
 * No import cycles in src/, bench/, scripts/ and test/, type imports included: import-x's
 * `no-cycle` skips `import type`, so eslint alone lets a cycle of types through. Run by
 * `npm run lint` (`tsx scripts/check-cycles.ts`); exits 1 and prints every cycle as
 * `a.ts → b.ts → a.ts` when there is one.
 *
 * An edge is any relative module specifier a file names: `import`, `import type`,
 * `export … from`, `import x = require()`, `import('…')` (a dynamic import or an import type)
 * and `require('…')`. Packages are not followed.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';

/** File → the files it imports. */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

export const ROOTS = ['src', 'bench', 'scripts', 'test'] as const;
const EXTENSIONS = ['.ts', '.tsx', '.mts', '.cts'];

/**
 * Every cycle of `graph`, one per knot (strongly connected component): its shortest cycle through
 * the knot's first file (in sort order), ending where it started. Knots in sort order; none: [].
 */
export function findCycles(graph: ImportGraph): string[][] {
  return knots(graph)
    .map((knot) => shortestCycle(graph, new Set(knot), knot[0]!))
    .filter((c): c is string[] => c !== undefined)
    .sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
}

/** The knots of `graph`: components with more than one file, or one file importing itself (Tarjan). */
export function knots(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = stack.pop()!; ; w = stack.pop()!) {
      onStack.delete(w);
      component.push(w);
      if (w === v) break;
    }
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(component.sort());
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return out;
}

/** The shortest path from `start` back to itself inside `within` (breadth first). */
function shortestCycle(graph: ImportGraph, within: ReadonlySet<string>, start: string): string[] | undefined {
  const parent = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const v = queue[i]!;
    for (const w of [...(graph.get(v) ?? [])].sort()) {
      if (!within.has(w)) continue;
      if (w === start) {
        const cycle = [v];
        while (cycle[0] !== start) cycle.unshift(parent.get(cycle[0]!)!);
        return [...cycle, start];
      }
      if (parent.has(w)) continue;
      parent.set(w, v);
      queue.push(w);
    }
  }
  return undefined;
}

/** The relative module specifiers `text` names (see the module comment for which forms). */
export function specifiersOf(fileName: string, text: string): string[] {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false);
  const found: string[] = [];
  const add = (node: ts.Node | undefined): void => {
    if (node && ts.isStringLiteralLike(node) && node.text.startsWith('.')) found.push(node.text);
  };
  const walk = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) add(node.moduleReference.expression);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal);
    else if (
      ts.isCallExpression(node) &&
      (node.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(node.expression) && node.expression.text === 'require'))
    )
      add(node.arguments[0]);
    ts.forEachChild(node, walk);
  };
  walk(sf);
  return found;
}

/** The file `spec` (relative, from `from`) names, as Node and TypeScript resolve it; undefined when none exists. */
export function resolveSpecifier(from: string, spec: string, isFile: (p: string) => boolean): string | undefined {
  const base = path.resolve(path.dirname(from), spec);
  const stem = base.replace(/\.(c|m)?js$/, '');
  const candidates = [base, ...EXTENSIONS.map((e) => stem + e), ...EXTENSIONS.map((e) => path.join(base, `index${e}`))];
  return candidates.find((c) => EXTENSIONS.some((e) => c.endsWith(e)) && isFile(c));
}

function sourceFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && EXTENSIONS.some((x) => e.name.endsWith(x)) && !e.name.endsWith('.d.ts'))
    .map((e) => path.join(e.parentPath, e.name));
}

/** The import graph of the project under `root`, with paths relative to it. */
export function projectGraph(root: string, roots: readonly string[] = ROOTS): Map<string, string[]> {
  const isFile = (p: string): boolean => {
    try {
      return fs.statSync(p).isFile();
    } catch {
      return false;
    }
  };
  const graph = new Map<string, string[]>();
  for (const file of roots.flatMap((r) => sourceFiles(path.join(root, r)))) {
    const targets = specifiersOf(file, fs.readFileSync(file, 'utf8'))
      .map((s) => resolveSpecifier(file, s, isFile))
      .filter((t): t is string => t !== undefined)
      .map((t) => path.relative(root, t));
    graph.set(path.relative(root, file), [...new Set(targets)]);
  }
  return graph;
}

function main(): number {
  const root = path.resolve(__dirname, '..');
  const graph = projectGraph(root);
  const cycles = findCycles(graph);
  if (cycles.length === 0) {
    process.stdout.write(`check-cycles: no import cycles in ${graph.size} files (${ROOTS.join(', ')}; type imports included)\n`);
    return 0;
  }
  const all = knots(graph);
  process.stderr.write(`check-cycles: ${cycles.length} import cycle${cycles.length === 1 ? '' : 's'} (type imports count):\n`);
  for (const cycle of cycles) {
    process.stderr.write(`  ${cycle.join(' → ')}\n`);
    const knot = all.find((k) => k.includes(cycle[0]!)) ?? [];
    if (knot.length > cycle.length - 1) process.stderr.write(`    (one knot of ${knot.length} files: ${knot.join(', ')})\n`);
  }
  process.stderr.write('  fix: move the shared types down a layer (into src/core), so the import goes one way\n');
  return 1;
}

if (require.main === module) process.exitCode = main();
