/** membench's library API: the CLI is a thin layer over these. */
export {
  runBenchmark,
  planRun,
  planDigest,
  runCell,
  cellSeed,
  RunInterrupted,
  DEFAULT_SEED,
  DEFAULT_CACHE_FILE,
  type RunOptions,
  type ProgressEvent,
  type CellStore,
  type LiveProviderSettings,
} from './harness/run/runner.js';
export { RunDir, PLAN_FILE, CELLS_DIR } from './harness/run/run-dir.js';
export { parseShard, type Shard, type ShardHeader, type ShardedRunHeader } from './harness/results/shard.js';
export { loadConfig, findConfigFile, CONFIG_FILES, type MembenchConfig } from './harness/run/config.js';
export {
  tune,
  parseValues,
  renderTune,
  TUNE_METRICS,
  type TuneOptions,
  type TuneResult,
  type TuneRow,
  type TuneMetric,
} from './harness/run/tune.js';
export {
  loadScenarioFile as loadScenario,
  checkScenarioFile,
  checkScenarioText,
  formatProblem,
  MAX_SCENARIO_BYTES,
  type Problem,
  type ScenarioCheck,
} from './harness/scenarios/load.js';
export { loadScenarios, builtinScenarioNames, resolveScenarioFile } from './harness/scenarios/builtins.js';
export { builtinSuiteNames, builtinSuiteFile } from './harness/scenarios/builtins.js';
export { generateWorkload, type GeneratedScenario, type GeneratedProbe } from './harness/scenarios/generator.js';
export {
  checkSpecText,
  checkSpecFile,
  loadSpecFile,
  DEFAULT_DISTANCES,
  type GeneratorSpec,
  type SpecCheck,
} from './harness/scenarios/generator-spec.js';
export * from './harness/scenarios/format.js';
export * from './harness/results/schema.js';
export { AgentSession } from './harness/agent/loop.js';
export { TokenCounter, encodingForModel, TOKENS_PER_MESSAGE, TOKENS_PER_REPLY } from './harness/core/tokens.js';
export { SqliteChatMessageHistory, type SqliteHistoryOptions } from './strategies/stores/history.js';
export { normalizeText } from './harness/core/text.js';
export * from './harness/models/index.js';
export { MembenchError, type ErrorCode } from './harness/core/errors.js';
export { builtinStrategies, findStrategy } from './strategies/index.js';
export * from './strategies/types.js';
export { writeRunOutput, defaultOutDir, renderConsoleSummary, renderMarkdown, renderJson } from './reports/index.js';
export {
  compareRuns,
  DEFAULT_THRESHOLDS,
  hasRegression,
  renderComparison,
  type Comparison,
  type CompareThresholds,
} from './reports/compare.js';
export { readResults, parseResults } from './harness/results/read.js';
export { mergeShards, type ShardInput } from './reports/merge.js';
export { renderHtml, renderJunit, renderCharts } from './reports/index.js';
export { runCellInProcesses, fuzzPlan } from './harness/process/crashes.js';
export { durabilityMatrix, modePrices } from './harness/results/durability-matrix.js';
export { Ledger } from './harness/agent/ledger.js';
export { importDataset, formatImportReport } from './harness/scenarios/importers/index.js';
export { expandFillers, generateFiller } from './harness/scenarios/filler.js';
export { loadStrategyDefinition } from './strategies/loader.js';
export {
  probeRetrieval,
  scoreRanking,
  summarizeRetrieval,
  poolSummaries,
  DEFAULT_RETRIEVAL_K,
} from './harness/results/retrieval.js';
export {
  ExchangeMemory,
  type ExchangeRetriever,
  type RankRequest,
  type RankedKey,
} from './strategies/shared/exchange-memory.js';
export { FusedRetriever } from './strategies/hybrid.js';
