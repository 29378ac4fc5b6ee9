/**
 * The tests `npm run mutate` runs against mutants: those that run strategies and metrics in the
 * test process. Tests of the CLI, the pool and crashed agent processes run their code in child
 * processes, where Stryker's active mutant is never switched on, so they would only cost time.
 */
import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

export default mergeConfig(
  base,
  defineConfig({
    test: {
      include: [
        'test/strategies/**/*.test.ts',
        'test/harness/core/**/*.test.ts',
        'test/harness/models/**/*.test.ts',
        'test/harness/results/**/*.test.ts',
        'test/reports/**/*.test.ts',
      ],
    },
  }),
);
