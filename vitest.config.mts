import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/harness/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // Suites share one dev server; files run in parallel workers but 2 cores is the budget.
    maxWorkers: 2,
    fileParallelism: true,
    reporters: ['default'],
  },
});
