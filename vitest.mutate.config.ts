/**
 * The tests `npm run mutate` runs against mutants: those that run strategies and metrics in the
 * test process. Tests of the CLI, the pool and crashed agent processes run their code in child
 * processes, where Stryker's active mutant is never switched on, so they would only cost time.
 */
import { defineConfig } from 'vitest/config';
import { shared } from './vitest.config.js';

// The shared settings without vitest.config.ts's projects: Stryker runs one list of files.
export default defineConfig({
  test: {
    ...shared,
    include: [
      'test/strategies/**/*.test.ts',
      'test/harness/core/**/*.test.ts',
      'test/harness/models/**/*.test.ts',
      'test/harness/results/**/*.test.ts',
      'test/reports/**/*.test.ts',
    ],
  },
});
