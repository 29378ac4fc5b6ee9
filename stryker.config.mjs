// Mutation testing (`npm run mutate`): StrykerJS mutates the strategies, the recall metrics and the
// atomic writes, and runs the in-process tests related to each mutant. Not part of `npm test` or CI.
// A narrower scope: `npm run mutate -- --mutate harness/core/metrics.ts,strategies/window.ts`.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  vitest: { configFile: 'vitest.mutate.config.ts', related: true },
  // Each mutant runs only the tests that reached it in the first (instrumented) run.
  coverageAnalysis: 'perTest',
  mutate: [
    'strategies/**/*.ts',
    'harness/core/metrics.ts',
    'harness/scenarios/evidence.ts',
    'harness/results/scoring.ts',
    'harness/core/porter-nltk.ts',
    'harness/core/fs.ts',
  ],
  // Mutants in module-level constants would need every test file reloaded per mutant.
  ignoreStatic: true,
  concurrency: 2,
  timeoutMS: 30_000,
  // The first run covers every related test file instrumented; a busy 2-core machine needs more than the default 5 minutes.
  dryRunTimeoutMinutes: 30,
  tempDirName: '.stryker-tmp',
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: '.stryker/mutation.html' },
  jsonReporter: { fileName: '.stryker/mutation.json' },
  clearTextReporter: { allowColor: false, logTests: false, maxTestsToLog: 0 },
  ignorePatterns: ['.membench', '.stryker'],
};
