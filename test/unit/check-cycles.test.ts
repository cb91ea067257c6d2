/** scripts/check-cycles.ts: the cycle finder on small in-memory graphs, and which import forms count. */
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findCycles, knots, resolveSpecifier, specifiersOf } from '../../scripts/check-cycles';

const graph = (edges: Record<string, string[]>): Map<string, string[]> => new Map(Object.entries(edges));

describe('findCycles', () => {
  it.each<[string, Record<string, string[]>, string[][]]>([
    ['no edges', { a: [], b: [] }, []],
    ['a chain', { a: ['b'], b: ['c'], c: [] }, []],
    ['a diamond', { a: ['b', 'c'], b: ['d'], c: ['d'], d: [] }, []],
    ['two files', { a: ['b'], b: ['a'] }, [['a', 'b', 'a']]],
    ['a file importing itself', { a: ['a'], b: [] }, [['a', 'a']]],
    ['three files', { c: ['a'], a: ['b'], b: ['c'] }, [['a', 'b', 'c', 'a']]],
    ['the shortest way round a knot', { a: ['b', 'd'], b: ['c'], c: ['a'], d: ['a'] }, [['a', 'd', 'a']]],
    [
      'two separate knots',
      { a: ['b'], b: ['a'], x: ['y'], y: ['z'], z: ['x'], m: ['a', 'x'] },
      [
        ['a', 'b', 'a'],
        ['x', 'y', 'z', 'x'],
      ],
    ],
    ['an edge to a file outside the graph', { a: ['gone'] }, []],
  ])('%s', (_what, edges, cycles) => {
    expect(findCycles(graph(edges))).toEqual(cycles);
  });

  it('a knot lists all its files, not only the shortest cycle', () => {
    expect(knots(graph({ a: ['b', 'd'], b: ['c'], c: ['a'], d: ['a'] }))).toEqual([['a', 'b', 'c', 'd']]);
  });

  it('the known cycle of main before the fix (activities → workflows → activities)', () => {
    const g = graph({
      'src/activities/capacity-memory.ts': ['src/workflows/capacity-memory.ts', 'src/core/capacity-memory.ts'],
      'src/workflows/capacity-memory.ts': ['src/workflows/proxies.ts', 'src/core/capacity-memory.ts'],
      'src/workflows/proxies.ts': ['src/activities/index.ts'],
      'src/activities/index.ts': ['src/activities/capacity-memory.ts'],
      'src/core/capacity-memory.ts': [],
    });
    expect(findCycles(g)).toEqual([
      [
        'src/activities/capacity-memory.ts',
        'src/workflows/capacity-memory.ts',
        'src/workflows/proxies.ts',
        'src/activities/index.ts',
        'src/activities/capacity-memory.ts',
      ],
    ]);
  });
});

describe('specifiersOf', () => {
  it('counts every relative form, type-only ones included, and no package', () => {
    const text = [
      "import { a } from './a';",
      "import type { B } from '../b';",
      "import './side-effect';",
      "export { c } from './c';",
      "export type { D } from './d';",
      "export * from './e';",
      "import f = require('./f');",
      "type G = import('./g').G;",
      "const h = await import('./h');",
      "const i = require('./i');",
      "import { z } from 'zod';",
      "import * as fs from 'node:fs';",
    ].join('\n');
    expect(specifiersOf('x.ts', text)).toEqual(['./a', '../b', './side-effect', './c', './d', './e', './f', './g', './h', './i']);
  });
});

describe('resolveSpecifier', () => {
  const files = new Set(['/p/src/a.ts', '/p/src/dir/index.ts', '/p/src/m.mts']);
  const isFile = (f: string): boolean => files.has(f);
  it.each([
    ['./a', '/p/src/a.ts'],
    ['./a.js', '/p/src/a.ts'],
    ['./dir', '/p/src/dir/index.ts'],
    ['./m', '/p/src/m.mts'],
    ['./missing', undefined],
  ])('%s → %s', (spec, file) => {
    expect(resolveSpecifier(path.join('/p/src', 'from.ts'), spec, isFile)).toBe(file);
  });
});
