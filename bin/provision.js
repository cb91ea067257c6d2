#!/usr/bin/env node
'use strict';
// An installed package runs the compiled JavaScript (dist/, built by `npm run build` / prepack).
// A git checkout runs its TypeScript sources under tsx (a dev dependency), even when a dist/ left
// by `npm pack` is there: that build may be older than the sources.
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const source = path.join(root, 'src', 'client', 'cli.ts');
const compiled = path.join(root, 'dist', 'src', 'client', 'cli.js');

function tsxAvailable() {
  try {
    require.resolve('tsx/cjs');
    return true;
  } catch {
    return false;
  }
}

// `ssh-proxy` (the ProxyCommand of every ssh entry, run once per `ssh NAME`) loads only its own module.
const entry = process.argv[2] === 'ssh-proxy' ? 'ssh-proxy' : 'cli';
if (fs.existsSync(source) && (tsxAvailable() || !fs.existsSync(compiled))) {
  require('tsx/cjs');
  require(path.join(root, 'src', 'client', `${entry}.ts`)).main();
} else {
  require(path.join(root, 'dist', 'src', 'client', `${entry}.js`)).main();
}
