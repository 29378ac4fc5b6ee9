/**
 * `membench bench` as a library call: runs the selected sections (floors, per-strategy save/load,
 * LangChain side by side, vector at scale, whole-suite throughput) with full or quick sizes and
 * returns one report, targets judged. Nothing is printed here (see render.ts).
 */
import os from 'node:os';
import { builtinStrategies, findStrategy } from '../../strategies/index.js';
import type { StrategyDefinition } from '../../strategies/types.js';
import { MembenchError } from '../core/errors.js';
import { MEMBENCH_VERSION } from '../core/package-info.js';
import { encodingForModel } from '../core/tokens.js';
import { measureFloors, type Floors } from './floors.js';
import { BENCH_TOKENIZER } from './rig.js';
import { benchRecovery, type RecoveryResult } from './recovery.js';
import { benchSaveLoad, type SaveLoadResult } from './save-load.js';
import { benchSuite, type SuiteResult } from './suite.js';
import { benchDatasetScale, type DatasetScaleResult } from './dataset-scale.js';
import { benchHostileText, type HostileTextResult } from './hostile-text.js';
import { benchAa, type AaResult } from './aa.js';
import { benchProtocol, type ProtocolBenchResult } from './protocol.js';
import { evaluateTargets, type Target } from './targets.js';
import { benchVectorScale, type VectorScaleResult } from './vector-scale.js';
import { benchVersusLangChain, type VersusResult } from './versus-langchain.js';
import {
  BENCH_SECTIONS,
  DATASET_QUESTIONS,
  DEFAULT_SIZES,
  PROTOCOL_QUESTIONS,
  QUICK_DATASET_QUESTIONS,
  QUICK_PROTOCOL_QUESTIONS,
  QUICK_SIZES,
  type BenchSection,
} from './sections.js';

// The sections and their sizes live in a light module (the CLI's flags read them without loading the bench).
export * from './sections.js';

/** What to run. */
export interface BenchOptions {
  quick?: boolean;
  only?: readonly BenchSection[];
  sizes?: readonly number[];
  /** Strategies of the save/load section (default: every built-in). */
  strategies?: readonly string[];
  /** Worker processes of the suite run (default: `membench run`'s, one more than the cores). */
  workers?: number;
  /** Questions of the dataset-scale file (default DATASET_QUESTIONS; the published LongMemEval_S has 500). */
  questions?: number;
  onProgress?: (line: string) => void;
}

/** Where and how the figures were taken: timings only compare within one machine and one load. */
export interface BenchHeader {
  membenchVersion: string;
  node: string;
  platform: string;
  cpus: number;
  cpuModel: string;
  /** 1-minute load average before and after: other work on the machine shows up here. */
  loadAverage: { start: number; end: number };
  quick: boolean;
  sections: BenchSection[];
  tokenizer: string;
  startedAt: string;
  durationMs: number;
}

/** Everything `membench bench` measured (`--json` prints this). */
export interface BenchReport {
  header: BenchHeader;
  floors?: Floors;
  saveLoad?: SaveLoadResult;
  recovery?: RecoveryResult;
  langchain?: VersusResult;
  vector?: VectorScaleResult;
  suite?: SuiteResult & { complete: boolean };
  dataset?: DatasetScaleResult;
  /** The "hostile text" section: the worst kind of question of a file with 100,000-character messages against its median plain question. */
  hostile?: HostileTextResult;
  /** The compare gate on two runs of the same code, and on two planted regressions. */
  aa?: AaResult;
  /** `--protocol longmemeval -s bm25` against its floor (read + tokenize + index + rank), CPU per question. */
  protocol?: ProtocolBenchResult;
  targets: Target[];
}

/** Measured turns at a history length: as many as the history (within bounds), so small histories stay small. */
function turnsAt(quick: boolean): (size: number) => number {
  const [low, high] = quick ? [20, 50] : [30, 200];
  return (size) => Math.min(high, Math.max(low, size));
}

function selectStrategies(names: readonly string[] | undefined): StrategyDefinition[] {
  if (!names || names.length === 0) return [...builtinStrategies];
  return names.map((name) => {
    const definition = findStrategy(name);
    if (!definition)
      throw new MembenchError(
        'UNKNOWN_STRATEGY',
        `unknown strategy "${name}": bench measures the built-ins: ${builtinStrategies.map((item) => item.name).join(', ')}`,
      );
    return definition;
  });
}

/** Runs the selected sections in order and judges the targets. */
export async function measureMembench(options: BenchOptions = {}): Promise<BenchReport> {
  const quick = options.quick ?? false;
  const sections =
    options.only && options.only.length > 0
      ? BENCH_SECTIONS.filter((section) => options.only!.includes(section))
      : [...BENCH_SECTIONS];
  const sizes = options.sizes && options.sizes.length > 0 ? options.sizes : quick ? QUICK_SIZES : DEFAULT_SIZES;
  if (sizes.some((size) => !Number.isInteger(size) || size < 1))
    throw new MembenchError('INVALID_ARGUMENT', `--sizes ${sizes.join(',')}: expected whole numbers >= 1`);
  const definitions = selectStrategies(options.strategies);
  const progress = options.onProgress;
  const startedAt = new Date();
  const started = performance.now();
  const loadStart = os.loadavg()[0]!;
  const report: Omit<BenchReport, 'header' | 'targets'> = {};

  if (sections.includes('floors')) {
    report.floors = await measureFloors({
      quick,
      vectors: 10_000,
      dimensions: 384,
      ef: 64,
      seed: 7,
      onProgress: progress,
    });
  }
  if (sections.includes('save-load')) {
    report.saveLoad = await benchSaveLoad({
      definitions,
      sizes,
      turnsAt: turnsAt(quick),
      warmupTurns: quick ? 3 : 5,
      rememberEvery: 100,
      rememberSamples: quick ? 5 : 20,
      onProgress: progress,
    });
  }
  if (sections.includes('recovery')) {
    report.recovery = await benchRecovery({
      strategies: definitions.map((definition) => definition.name),
      onProgress: progress,
    });
  }
  if (sections.includes('langchain')) {
    report.langchain = await benchVersusLangChain({
      turns: quick ? 300 : 1000,
      windowK: 5,
      maxTokenLimit: 1000,
      budgetMs: quick ? 8_000 : 60_000,
      onProgress: progress,
    });
  }
  if (sections.includes('vector')) {
    report.vector = await benchVectorScale({
      count: quick ? 10_000 : 100_000,
      dimensions: 384,
      queries: quick ? 50 : 100,
      k: 5,
      recallTarget: 0.95,
      seed: 11,
      iterations: quick ? 500 : 2000,
      onProgress: progress,
    });
  }
  if (sections.includes('suite')) {
    // The whole default run, quick or not: the `membench run` command a user types, timed from its
    // start to its exit (reports and charts included), with its own default worker count unless told otherwise.
    const suite = await benchSuite({
      ...(options.workers !== undefined ? { workers: options.workers } : {}),
      onProgress: progress,
    });
    report.suite = { ...suite, complete: true };
  }

  if (sections.includes('dataset')) {
    const questions = options.questions ?? (quick ? QUICK_DATASET_QUESTIONS : DATASET_QUESTIONS);
    if (!Number.isInteger(questions) || questions < 1)
      throw new MembenchError('INVALID_ARGUMENT', `--questions ${questions}: expected a whole number >= 1`);
    report.dataset = await benchDatasetScale({
      questions,
      strategies: definitions.map((definition) => definition.name),
      onProgress: progress,
    });
  }
  if (sections.includes('hostile')) report.hostile = await benchHostileText({ onProgress: progress });

  if (sections.includes('aa')) report.aa = await benchAa({ quick, ...(progress ? { onProgress: progress } : {}) });

  if (sections.includes('protocol'))
    report.protocol = await benchProtocol({
      questions: quick ? QUICK_PROTOCOL_QUESTIONS : PROTOCOL_QUESTIONS,
      ...(progress ? { onProgress: progress } : {}),
    });

  const header: BenchHeader = {
    membenchVersion: MEMBENCH_VERSION,
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    loadAverage: { start: loadStart, end: os.loadavg()[0]! },
    quick,
    sections,
    tokenizer: encodingForModel(BENCH_TOKENIZER),
    startedAt: startedAt.toISOString(),
    durationMs: performance.now() - started,
  };
  return { header, ...report, targets: evaluateTargets(report) };
}
