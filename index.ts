/** membench's library API: the CLI is a thin layer over these. */
export { runBenchmark, planRun, runCell, cellSeed, DEFAULT_SEED, type RunOptions, type ProgressEvent } from './harness/runner.js';
export { loadScenarioFile as loadScenario, checkScenarioFile, checkScenarioText, formatProblem, MAX_SCENARIO_BYTES, type Problem, type ScenarioCheck } from './harness/load-scenario.js';
export { loadScenarios, builtinScenarioNames, resolveScenarioFile } from './harness/builtin-scenarios.js';
export * from './harness/scenario.js';
export * from './harness/results.js';
export { AgentSession, type TurnRecord, type ProbeRecord } from './harness/agent.js';
export { TokenCounter, encodingForModel, TOKENS_PER_MESSAGE, TOKENS_PER_REPLY } from './harness/tokens.js';
export { SqliteChatMessageHistory } from './harness/history.js';
export { normalizeText } from './harness/text.js';
export * from './harness/models/index.js';
export { MembenchError, type ErrorCode } from './harness/errors.js';
export { builtinStrategies, findStrategy } from './strategies/index.js';
export * from './strategies/types.js';
export { writeRunOutput, defaultOutDir, renderConsoleSummary, renderMarkdown, renderJson } from './reports/index.js';
