import os from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Vitest's default is one file fewer than the cores (one at a time on two cores); most files
    // wait on child processes and fsyncs, so one more than the cores keeps them busy.
    maxWorkers: os.availableParallelism() + 1,
  },
});
