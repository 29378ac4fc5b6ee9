/**
 * Whole-run throughput: `runBenchmark` over the built-in offline suite (every built-in scenario
 * not tagged `long`, every built-in strategy), timed end to end, with where the time went: per
 * scenario, in-process cells against cells run in agent processes (crashes, concurrency), by
 * phase (process start, module loading, open, replay, recovery, checks), and the share the
 * strategies' own save + load account for.
 */
import { loadScenarios, builtinScenarioNames } from '../scenarios/builtins.js';
import { needsProcesses, runBenchmark } from '../run/runner.js';
import { phaseTotals, type PhaseTotals } from '../../reports/profile.js';

/** What to run: defaults to the built-in offline suite. */
export interface SuiteOptions {
  /** Scenario names (default: every built-in not tagged `long`). */
  scenarios?: readonly string[];
  /** Strategy names (default: every built-in). */
  strategies?: readonly string[];
  /** Worker processes of the run (default: the runner's default). */
  workers?: number;
  onProgress?: (line: string) => void;
}

/** Wall time of a group of cells. */
export interface SuitePhase {
  name: string;
  cells: number;
  ms: number;
}

/** The run's throughput and its breakdown. */
export interface SuiteResult {
  /** Worker processes asked for; null: the runner's default. */
  workers: number | null;
  scenarios: string[];
  strategies: string[];
  cells: number;
  errors: string[];
  turns: number;
  wallMs: number;
  turnsPerSec: number;
  /** Sum of every turn's save + load time (in the agent, wherever it ran). */
  strategyMs: number;
  /** Agent processes killed at crash points (each one followed by a fresh process and a reopen). */
  crashes: number;
  byScenario: SuitePhase[];
  /** Cells replayed in this process against cells replayed in agent processes. */
  byMode: SuitePhase[];
  /** Where the time went by phase (`membench run --profile`), summed over the cells. */
  phases: PhaseTotals;
}

/** Every built-in scenario except those tagged `long` (the 10,000-turn class), and every built-in suite, by the names `run` takes. */
export async function offlineSuiteScenarios(): Promise<string[]> {
  const names = builtinScenarioNames();
  const { scenarios } = await loadScenarios(names);
  const long = new Set(scenarios.filter((scenario) => (scenario.tags ?? []).includes('long')).map((scenario) => scenario.name));
  return names.filter((name) => !long.has(name));
}

/** Runs the suite and times it. */
export async function benchSuite(options: SuiteOptions = {}): Promise<SuiteResult> {
  const names = options.scenarios ? [...options.scenarios] : await offlineSuiteScenarios();
  const { scenarios } = await loadScenarios(names);
  const inProcesses = new Set(scenarios.filter((scenario) => needsProcesses(scenario, { isolate: false, crashFuzz: 0 })).map((scenario) => scenario.name));
  options.onProgress?.(`suite: ${names.length} scenarios × ${options.strategies?.length ?? 'all'} strategies`);
  const started = performance.now();
  const result = await runBenchmark({
    // No scenario named: the runner's own default run, as `membench run` (the durability modes priced too).
    ...(options.scenarios ? { scenarios: options.scenarios } : {}),
    ...(options.strategies ? { strategies: options.strategies } : {}),
    ...(options.workers !== undefined ? { workers: options.workers } : {}),
    profile: true,
    onProgress: (event) => {
      if (event.type === 'cell') options.onProgress?.(`suite: [${event.index + 1}/${event.cells}] ${event.result.id} ${event.result.durationMs.toFixed(0)} ms`);
    },
  });
  const wallMs = performance.now() - started;
  const group = (key: (cell: (typeof result.cells)[number]) => string): SuitePhase[] => {
    const phases = new Map<string, SuitePhase>();
    for (const cell of result.cells) {
      const name = key(cell);
      const phase = phases.get(name) ?? { name, cells: 0, ms: 0 };
      phase.cells++;
      phase.ms += cell.durationMs;
      phases.set(name, phase);
    }
    return [...phases.values()].sort((a, b) => b.ms - a.ms);
  };
  const turns = result.cells.reduce((sum, cell) => sum + cell.turns.length, 0);
  const strategyMs = result.cells.reduce((sum, cell) => sum + cell.turns.reduce((total, turn) => total + turn.saveMs + (turn.loadMs ?? 0), 0), 0);
  return {
    workers: options.workers ?? null,
    scenarios: names,
    strategies: result.header.strategies.map((strategy) => strategy.setting),
    cells: result.cells.length,
    errors: result.cells.filter((cell) => cell.status === 'error').map((cell) => `${cell.id}: ${cell.error ?? 'error'}`),
    turns,
    wallMs,
    turnsPerSec: wallMs > 0 ? turns / (wallMs / 1000) : 0,
    strategyMs,
    crashes: result.cells.reduce((sum, cell) => sum + (cell.durabilityOutcome?.crashes.length ?? 0), 0),
    byScenario: group((cell) => cell.scenario),
    byMode: group((cell) => (inProcesses.has(cell.scenario) ? 'agent processes (crash / concurrent scenarios)' : 'in process')),
    phases: phaseTotals(result),
  };
}
