#!/usr/bin/env node
'use strict';
// Runs the TypeScript sources directly (tsx), so `npx provision` works right after `npm install`.
require('tsx/cjs');
require('../src/client/cli.ts').main();
