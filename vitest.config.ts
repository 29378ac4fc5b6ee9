/**
 * Three kinds of project, so the inner loop runs only what a change needs (`npx vitest run --project 'unit*'`):
 * - `unit`: code that runs in the test process (strategies, core, scenarios, models, results, agent, reports),
 *   its files sharing a module graph per worker; `unit-isolated`: the few that replace a module;
 * - `process`: tests that start child processes from the sources (the modules an agent process loads, the bench,
 *   and the few files elsewhere that fork a writer or a crasher);
 * - `cli`: tests that run the built `dist/` (the CLI, the docs' --help reference, the bundle checks); its global
 *   setup rebuilds a `dist/` older than the sources first (test/helpers/fresh-dist.ts).
 * Every test file gets a temp dir of its own as TMPDIR, removed after it (test/helpers/temp-sandbox.ts).
 */
import os from 'node:os';
import { configDefaults, defineConfig, type ViteUserConfig } from 'vitest/config';

/**
 * Test files outside test/cli and test/docs that run `dist/` (the library as built, the agent bundle);
 * most start many agent, pool or writer processes, each several times cheaper from the build than
 * from the sources through tsx (test/helpers/built.ts).
 */
export const DIST_TESTS = [
  'test/architecture.test.ts',
  'test/harness/process/snapshot.test.ts',
  'test/harness/process/crashes.test.ts',
  'test/harness/process/crash-matrix.test.ts',
  'test/harness/core/durable-batch.test.ts',
  'test/harness/results/older-versions.test.ts',
  'test/harness/bench/bench.test.ts',
  'test/harness/run/pool.test.ts',
  'test/harness/run/cell-order.test.ts',
  'test/harness/process/reuse.test.ts',
  'test/harness/process/cell-session.test.ts',
  'test/harness/process/warm-spares.test.ts',
  'test/harness/process/session-resume.test.ts',
  'test/harness/process/worker.test.ts',
  'test/harness/process/agent-process.test.ts',
  'test/harness/run/concurrent-cells.test.ts',
  'test/strategies/vector.test.ts',
  'test/strategies/loader-syntax.test.ts',
  'test/strategies/stores/memory-files.test.ts',
  'test/reports/chart-worker.test.ts',
];

/** Test files outside harness/process, run and bench that start child processes (a writer, a crasher, a browser). */
export const FORKING_TESTS = [
  'test/lint.test.ts',
  'test/harness/core/storage-errors.test.ts',
  'test/harness/results/read-path.test.ts',
  'test/reports/html.test.ts',
  'test/strategies/bm25.test.ts',
  'test/strategies/stores/scope-lock.test.ts',
];

/** Unit test files that replace a module (`vi.mock`): the mock must not meet a module graph other files loaded. */
export const MOCKING_TESTS = ['test/strategies/derived-commits.test.ts'];

const CLI = ['test/cli/**/*.test.ts', 'test/docs/**/*.test.ts', ...DIST_TESTS];
const PROCESS = [
  'test/harness/process/**/*.test.ts',
  'test/harness/run/**/*.test.ts',
  'test/harness/bench/**/*.test.ts',
  ...FORKING_TESTS,
];

/** JavaScript modules under a test file's temp dir (test/helpers/temp-sandbox.ts). */
const USER_JS_MODULES = /\/membench-test-[^/]+\/.+\.[cm]?js(?:\?load=\d+)?$/u;

/** What every project shares (vitest.mutate.config.ts starts from it too). */
export const shared = {
  testTimeout: 60_000,
  hookTimeout: 120_000,
  pool: 'forks',
  // Vitest's default is one file fewer than the cores (one at a time on two cores); most files
  // wait on child processes and fsyncs, so one more than the cores keeps them busy.
  maxWorkers: os.availableParallelism() + 1,
  setupFiles: ['test/helpers/temp-sandbox.ts'],
  // A spy left in place would reach the next file of a worker that shares its modules.
  restoreMocks: true,
} satisfies NonNullable<ViteUserConfig['test']>;

export default defineConfig({
  test: {
    ...shared,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          // One module graph per worker, shared by its files (each file importing the sources again
          // was ~70 % of this project's time); a file that replaces a module needs its own.
          isolate: false,
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...CLI, ...PROCESS, ...MOCKING_TESTS],
          // JavaScript a test writes to its temp dir (a user's strategy module) is imported by Node, as
          // the loader imports it outside the tests, not transformed by vitest.
          server: { deps: { external: [USER_JS_MODULES] } },
        },
      },
      { extends: true, test: { name: 'unit-isolated', include: MOCKING_TESTS } },
      { extends: true, test: { name: 'process', include: PROCESS, exclude: [...configDefaults.exclude, ...CLI] } },
      {
        extends: true,
        test: {
          name: 'cli',
          include: CLI,
          globalSetup: ['test/helpers/fresh-dist.ts'],
          // dist/ is loaded by Node itself, as the CLI loads it, not transformed module by module by vitest.
          server: { deps: { external: [/\/dist\//u] } },
        },
      },
    ],
  },
});
