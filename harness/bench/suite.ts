/**
 * Whole-run wall time: the `membench run` command a user types (the default run unless told
 * otherwise), run as a child process through the package's own bin and timed from its start to
 * its exit, reports and charts included, with its CPU (user + system of the whole process tree)
 * and where the time went: per scenario, in-process cells against cells run in agent processes
 * (crashes, concurrency), by phase (process start, module loading, open, replay, recovery,
 * checks), and the share the strategies' own save + load account for.
 */
import { spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { loadScenarios, builtinScenarioNames } from '../scenarios/builtins.js';
import { needsProcesses } from '../run/runner.js';
import { cellsByStatus } from '../results/cells.js';
import { readResults } from '../results/read.js';
import { PACKAGE_ROOT } from '../core/package-info.js';
import { MembenchError } from '../core/errors.js';
import { phaseTotals, type PhaseTotals } from '../../reports/profile.js';
import type { RunResult } from '../results/schema.js';
import { measureForkFloor } from './floors.js';
import type { Timing } from './measure.js';
import { snapshotUnusable } from '../process/agent-process.js';
import { benchChild, benchTempDir } from './scratch.js';

/** What to run: defaults to the built-in offline suite. */
export interface SuiteOptions {
  /** Scenario names (default: every built-in not tagged `long`). */
  scenarios?: readonly string[];
  /** Strategy names (default: every built-in). */
  strategies?: readonly string[];
  /** Worker processes of the run (default: the runner's default). */
  workers?: number;
  /** Forks of the fork + SIGKILL + reopen floor measured before the run and again after it (default 8 each). */
  floorForks?: number;
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
  /** What was timed. */
  command: string;
  /** Worker processes asked for; null: the runner's default. */
  workers: number | null;
  scenarios: string[];
  strategies: string[];
  cells: number;
  errors: string[];
  turns: number;
  /** The whole command, from its start to its exit (Node's start, planning, cells, reports and charts). */
  wallMs: number;
  /** Planning and cells alone (runBenchmark, as results.json's header says). */
  cellsMs: number;
  /** User + system CPU of the command's whole process tree; null where the OS does not say (not Linux). */
  cpuMs: number | null;
  /**
   * The fork + SIGKILL + reopen floor (ms, p50), measured in this section just before the run and
   * just after it (the mean of the two): the same machine under the same load as the run.
   */
  forkFloorMs: number;
  /** The run's wall time in floors: what the target judges, so it holds on any machine. */
  floorRatio: number;
  /**
   * CPU (user + system) of one fork + SIGKILL + reopen, the child's and this process's, averaged
   * over the floor's forks before and after the run; null where the OS does not say (not Linux).
   */
  forkFloorCpuMs: number | null;
  /**
   * The run's process-tree CPU in floor CPUs: a reading beside `floorRatio`, not the target. On a
   * busy machine a lone fork's wall time waits for a core while the run's many processes keep both
   * busy, so the wall ratio moves with the load; CPU time moves less.
   */
  cpuFloorRatio: number | null;
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
  /**
   * Agent processes the run started from the startup snapshot against those that evaluated their
   * modules (slower: the ratio is then not this checkout's), and why, when any did.
   */
  snapshot: SuiteSnapshot;
}

/** Whether the run's agent processes started from the startup snapshot. */
export interface SuiteSnapshot {
  starts: number;
  otherStarts: number;
  /** Why processes started without it (null: every one started from it). */
  warning: string | null;
}

/** The suite's snapshot figures: `unusable` is asked only when a process started without it. */
export function suiteSnapshot(phases: PhaseTotals, unusable: () => string | null): SuiteSnapshot {
  const starts = phases.snapshotStarts;
  const otherStarts = phases.otherStarts;
  if (otherStarts === 0) return { starts, otherStarts, warning: null };
  const why =
    unusable() ??
    'the snapshot looks usable here, yet they did not use it (a strategy outside the built-ins, or a run from the TypeScript source)';
  return {
    starts,
    otherStarts,
    warning: `${otherStarts} of ${starts + otherStarts} agent processes did not start from the startup snapshot, so the figures are slower than this checkout's: ${why}`,
  };
}

/** Every built-in scenario except those tagged `long` (the 10,000-turn class), and every built-in suite, by the names `run` takes. */
export async function offlineSuiteScenarios(): Promise<string[]> {
  const names = builtinScenarioNames();
  const { scenarios } = await loadScenarios(names);
  const long = new Set(
    scenarios.filter((scenario) => (scenario.tags ?? []).includes('long')).map((scenario) => scenario.name),
  );
  return names.filter((name) => !long.has(name));
}

/** User + system CPU of this process's waited-for children, from /proc (Linux); null elsewhere. */
async function childrenCpuMs(): Promise<number | null> {
  try {
    const stat = await readFile('/proc/self/stat', 'utf8');
    // Fields after the command name (which may hold spaces): cutime and cstime are the 14th and 15th, in clock ticks.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return null;
  }
}
/** USER_HZ: 100 on every Linux build Node supports. */
const CLOCK_TICKS_PER_SECOND = 100;

/**
 * The fork floor (`measureForkFloor`: one unmeasured fork, then at least `forks`) and its CPU per
 * fork: the forked children's (reaped, so in this process's children times) plus this process's
 * own (forking, waiting, reopening the store).
 */
async function forkFloorWithCpu(forks: number): Promise<{ timing: Timing; cpuMs: number | null }> {
  const childrenBefore = await childrenCpuMs();
  const ownBefore = process.cpuUsage();
  const timing = await measureForkFloor({ quick: false, iterations: forks });
  const own = process.cpuUsage(ownBefore);
  const childrenAfter = await childrenCpuMs();
  if (childrenBefore === null || childrenAfter === null) return { timing, cpuMs: null };
  const calls = timing.samples + 1;
  return { timing, cpuMs: (childrenAfter - childrenBefore + (own.user + own.system) / 1000) / calls };
}

/** The run's CPU over the floor's, or null when either was not measured. */
export function cpuFloorRatio(runCpuMs: number | null, floorCpuMs: number | null): number | null {
  return runCpuMs === null || floorCpuMs === null || floorCpuMs <= 0 ? null : runCpuMs / floorCpuMs;
}

/** The `membench run` arguments of a suite run (`--out` added by the caller). */
export function suiteArguments(options: SuiteOptions): string[] {
  return [
    'run',
    ...(options.scenarios ?? []).flatMap((name) => ['-c', name]),
    ...(options.strategies ?? []).flatMap((name) => ['-s', name]),
    ...(options.workers !== undefined ? ['-w', String(options.workers)] : []),
    '--profile',
    '--quiet',
  ];
}

/** Runs `membench run` (the default run unless scenarios, strategies or workers are given) and times it. */
export async function benchSuite(options: SuiteOptions = {}): Promise<SuiteResult> {
  const names = options.scenarios ? [...options.scenarios] : await offlineSuiteScenarios();
  const { scenarios } = await loadScenarios(names);
  const inProcesses = new Set(
    scenarios
      .filter((scenario) => needsProcesses(scenario, { isolate: false, crashFuzz: 0 }))
      .map((scenario) => scenario.name),
  );
  options.onProgress?.(
    `suite: membench run over ${names.length} scenarios × ${options.strategies?.length ?? 'all'} strategies`,
  );
  const out = await benchTempDir('membench-suite-');
  try {
    const args = [path.join(PACKAGE_ROOT, 'bin', 'membench.js'), ...suiteArguments(options), '--out', out];
    const floorForks = options.floorForks ?? 8;
    const floorBefore = await forkFloorWithCpu(floorForks);
    const cpuBefore = await childrenCpuMs();
    const started = performance.now();
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      const child = benchChild(spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] }));
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
      });
      child.on('error', reject);
      child.on('close', (exitCode) => resolve({ code: exitCode, stderr }));
    });
    const wallMs = performance.now() - started;
    const cpuAfter = await childrenCpuMs();
    const floorAfter = await forkFloorWithCpu(floorForks);
    const forkFloorMs = (floorBefore.timing.p50Ms + floorAfter.timing.p50Ms) / 2;
    const forkFloorCpuMs =
      floorBefore.cpuMs !== null && floorAfter.cpuMs !== null ? (floorBefore.cpuMs + floorAfter.cpuMs) / 2 : null;
    // Exit 1 is failed cells (counted below from results.json); anything else left no results to read.
    if (code !== 0 && code !== 1) {
      const message = `bench suite: membench ${suiteArguments(options).join(' ')} exited with code ${code}: ${stderr.trim().split('\n').slice(-5).join(' | ')}`;
      throw code === 2 ? new MembenchError('INVALID_ARGUMENT', message) : new Error(message);
    }
    const { result } = await readResults(out);
    return summarize(result, {
      names,
      inProcesses,
      wallMs,
      cpuMs: cpuBefore !== null && cpuAfter !== null ? cpuAfter - cpuBefore : null,
      workers: options.workers ?? null,
      forkFloorMs,
      forkFloorCpuMs,
    });
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

/** The figures of a timed run from its results. */
function summarize(
  result: RunResult,
  run: {
    names: string[];
    inProcesses: Set<string>;
    wallMs: number;
    cpuMs: number | null;
    workers: number | null;
    forkFloorMs: number;
    forkFloorCpuMs: number | null;
  },
): SuiteResult {
  const { names, inProcesses, wallMs } = run;
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
  const { ok, errors } = cellsByStatus(result.cells);
  const phases = phaseTotals(result);
  const turns = ok.reduce((sum, cell) => sum + cell.turns.length, 0);
  const strategyMs = ok.reduce(
    (sum, cell) => sum + cell.turns.reduce((total, turn) => total + turn.saveMs + (turn.loadMs ?? 0), 0),
    0,
  );
  return {
    command: 'membench run',
    workers: run.workers,
    scenarios: names,
    strategies: result.header.strategies.map((strategy) => strategy.setting),
    cells: result.cells.length,
    errors: errors.map((cell) => `${cell.id}: ${cell.error}`),
    turns,
    wallMs,
    cellsMs: result.header.durationMs,
    cpuMs: run.cpuMs,
    forkFloorMs: run.forkFloorMs,
    floorRatio: wallMs / run.forkFloorMs,
    forkFloorCpuMs: run.forkFloorCpuMs,
    cpuFloorRatio: cpuFloorRatio(run.cpuMs, run.forkFloorCpuMs),
    turnsPerSec: wallMs > 0 ? turns / (wallMs / 1000) : 0,
    strategyMs,
    crashes: result.cells.reduce((sum, cell) => sum + (cell.durabilityOutcome?.crashes.length ?? 0), 0),
    byScenario: group((cell) => cell.scenario),
    byMode: group((cell) =>
      inProcesses.has(cell.scenario) ? 'agent processes (crash / concurrent scenarios)' : 'in process',
    ),
    phases,
    snapshot: suiteSnapshot(phases, () => snapshotUnusable(path.join(PACKAGE_ROOT, 'dist', 'harness', 'process'))),
  };
}
