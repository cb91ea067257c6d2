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
    // The capacity memory is per deployment and cases share a lab's task queue while expecting the
    // plain plan order: off by default here; test/workflows/capacity-memory.test.ts turns it on.
    env: { GPUPROV_CAPACITY_MEMORY: '0' },
  },
});
