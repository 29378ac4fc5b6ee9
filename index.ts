/**
 * membench's library API: what a program needs to run a benchmark, write a strategy, read and report
 * results. The CLI is a thin layer over these; docs/library-api.md lists every name (a test checks it).
 * Internals (the pool, agent processes, scoring helpers, stores) are imported from their modules by
 * the CLI and the tests, not from here.
 */

// Running a benchmark
export {
  runBenchmark,
  RunInterrupted,
  DEFAULT_SEED,
  type RunOptions,
  type ProgressEvent,
  type CellStore,
  type LiveProviderSettings,
} from './harness/run/runner.js';
export {
  tune,
  renderTune,
  type TuneOptions,
  type TuneResult,
  type TuneRow,
} from './harness/run/tune.js';
export type { TuneMetric } from './harness/run/tune-metrics.js';
export { loadConfig, findConfigFile, type MembenchConfig } from './harness/run/config.js';
export { resolveSettings, type ResolvedSettings } from './harness/run/layers.js';
export { SETTINGS, type SettingValues } from './harness/run/settings.js';
export type { RunMatrix, RunProviders, RunExecution, RunHooks } from './harness/run/options.js';
export { parseShard, type Shard } from './harness/results/shard.js';

// Writing a strategy: the contract, and the registry of built-ins
export {
  defineStrategy,
  DURABILITY_MODES,
  type DurabilityMode,
  type MemoryStrategy,
  type StrategyDefinition,
  type StrategyContext,
  type StrategyCapabilities,
  type MemoryEvent,
  type LoadInput,
  type LoadResult,
  type RetrievedItem,
  type MemoryItem,
  type RememberAck,
  type StoreCheck,
} from './strategies/types.js';
export { builtinStrategies, findStrategy } from './strategies/index.js';
export { loadStrategyDefinition } from './strategies/loader.js';
export { SqliteChatMessageHistory, type SqliteHistoryOptions } from './strategies/stores/history.js';
export { TokenCounter, encodingForModel } from './harness/core/tokens.js';

// Models and embedders
export {
  createModel,
  createEmbedder,
  OfflineModel,
  HashedEmbedder,
  OpenAIChatModel,
  OpenAIEmbedder,
  ResponseCache,
  type ChatModel,
  type ChatRequest,
  type ChatResponse,
  type Embedder,
  type ModelTask,
  type ProviderOptions,
  type OpenAIProviderOptions,
} from './harness/models/index.js';

// Scenarios: built-in, from files, generated, imported
export {
  loadScenarioFile as loadScenario,
  checkScenarioFile,
  checkScenarioText,
  formatProblem,
  type Problem,
  type ScenarioCheck,
} from './harness/scenarios/load.js';
export { loadScenarios, builtinScenarioNames, builtinSuiteNames } from './harness/scenarios/builtins.js';
export type { Scenario, Step, StepKind, ProbeCategory, CrashPoint } from './harness/scenarios/format.js';
export { generateWorkload, type GeneratedScenario, type GeneratedProbe } from './harness/scenarios/generator.js';
export {
  loadSpecFile,
  checkSpecFile,
  checkSpecText,
  type GeneratorSpec,
  type SpecCheck,
} from './harness/scenarios/generator-spec.js';
export { importDataset, formatImportReport } from './harness/scenarios/importers/index.js';

// Results: a cell is ok (every figure) or an error (its error and phase, no figure); split once
export { cellsByStatus, okCells, errorCells } from './harness/results/cells.js';
// Results: the one schema, reading results.json back
export {
  runResultSchema,
  RESULTS_SCHEMA_VERSION,
  type RunResult,
  type RunHeader,
  type CellResult,
  type OkCell,
  type ErrorCell,
  type CellTokens,
  type ProbeRecord,
  type RecallSummary,
  type RetrievalSummary,
  type DurabilityOutcome,
  type ModePrice,
  type Protocol,
} from './harness/results/schema.js';
export { readResults, parseResults } from './harness/results/read.js';
export { mergeShards, type ShardInput } from './reports/merge.js';

// Reports: pure renderers (results -> string) and the writer of a run's output dir
export {
  writeRunOutput,
  defaultOutDir,
  renderConsoleSummary,
  renderMarkdown,
  renderJson,
  renderHtml,
  renderJunit,
} from './reports/index.js';
export { renderCharts } from './reports/charts.js';
export {
  compareRuns,
  hasRegression,
  renderComparison,
  DEFAULT_THRESHOLDS,
  type Comparison,
  type CompareThresholds,
} from './reports/compare.js';

export { MembenchError, type ErrorCode } from './harness/core/errors.js';
