/**
 * The A/A check of the CI gate: the default run (a small matrix in quick mode) run twice on this
 * machine, one after the other as a CI job runs base and head, and compared. Every figure the gate
 * flags between two runs of the same code is a false alarm (target 0). Beside it, two planted
 * regressions the gate must catch, each run as its own pair under one setting name
 * (fixtures/strategies/planted.mjs, steered by environment variables; a repository checkout only):
 * a window made forgetful (k=1 where base had k=2), which must fail a recall figure, and a save
 * made five times slower, which must fail the save time. Planted together on one stretched cell, the
 * forgetful window lost nothing the cell's probes measured (both windows missed them) and the save
 * alone was caught, counted as the catch of both.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { compareRuns } from '../../reports/compare.js';
import type { Comparison } from '../../reports/compare-types.js';
import { PACKAGE_ROOT } from '../core/package-info.js';
import { readResults } from '../results/read.js';
import { benchChild, benchTempDir } from './scratch.js';

/** The matrix of quick mode: a crash scenario, a concurrent one and a scripted one, three strategies. */
export const QUICK_AA_MATRIX = [
  ...['buffer', 'window', 'bm25'].flatMap((strategy) => ['-s', strategy]),
  ...['remember-then-crash', 'concurrent-edits', 'recipes-en'].flatMap((scenario) => ['-c', scenario]),
];
const PLANTED = path.join(PACKAGE_ROOT, 'fixtures', 'strategies', 'planted.mjs');
/** The plants, each with the matrix it shows on and the figure that must fail (a metric whose name holds it: every recall figure, the save time). */
export const PLANTS = {
  /** A scripted scenario whose probes a window of two exchanges reaches and one of one does not. */
  forgetful: {
    what: 'k=1 where base had k=2',
    matrix: ['-s', PLANTED, '-c', 'recipes-en'],
    env: { MEMBENCH_PLANTED_K: '1' },
    figure: 'recall',
  },
  /** The same scenario stretched so its saves are numerous enough to judge. */
  slower: {
    what: 'save ×5',
    matrix: ['-s', PLANTED, '-c', 'recipes-en', '--stretch', '60'],
    env: { MEMBENCH_PLANTED_SAVE_SLOWDOWN: '5' },
    figure: 'save time',
  },
} as const;
export type PlantName = keyof typeof PLANTS;
export const PLANT_NAMES = Object.keys(PLANTS) as PlantName[];

/** What the gate flagged on one plant, and how many of those are the figure the plant moves. */
export interface PlantCatch {
  flagged: FlaggedFigure[];
  /** Flagged figures of the kind the plant must fail (a recall figure, the save time). */
  expected: number;
}

/** A flagged figure, as the gate named it. */
export interface FlaggedFigure {
  cell: string;
  metric: string;
  change: string;
  note?: string;
}

/** What the A/A comparison found, and whether each plant was caught. */
export interface AaResult {
  /** `membench run` arguments of each of the two runs (empty: the default run). */
  matrix: string[];
  cellsCompared: number;
  /** Checks that reached a verdict (not "n/a"), and how many latency figures had too few samples to judge. */
  figuresJudged: number;
  latencyJudged: number;
  latencyTooFew: number;
  /** Figures of nondeterministic (concurrent) cells shown but not gated. */
  ungated: number;
  /** The gate's false alarms between two runs of the same code (target 0). */
  flagged: FlaggedFigure[];
  /** The planted regressions: what the gate flagged on each (its own figure must be among them), or why they were not run. */
  planted: Record<PlantName, PlantCatch> | { skipped: string };
}

/** Runs `membench run ARGS --out DIR -q` through the package's bin; exit 0 or 1 (failed cells) leave results. */
async function runCli(args: readonly string[], out: string, env: NodeJS.ProcessEnv = {}): Promise<void> {
  const bin = path.join(PACKAGE_ROOT, 'bin', 'membench.js');
  const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
    const child = benchChild(
      spawn(process.execPath, [bin, 'run', ...args, '--out', out, '-q'], {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, ...env },
      }),
    );
    let text = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk;
    });
    child.on('error', reject);
    child.on('close', (exitCode) => resolve({ code: exitCode, stderr: text }));
  });
  if (code !== 0 && code !== 1)
    throw new Error(`bench A/A: membench run ${args.join(' ')} exited with code ${code}: ${stderr.trim().slice(-400)}`);
}

const flaggedOf = (comparison: Comparison): FlaggedFigure[] =>
  comparison.regressions.map(({ cell, check }) => ({
    cell,
    metric: check.metric,
    change: check.change,
    ...(check.note ? { note: check.note } : {}),
  }));

/** Runs `args` twice (the second time with `env`) and compares the second with the first. */
async function twice(dir: string, name: string, args: readonly string[], env: NodeJS.ProcessEnv = {}) {
  const [base, head] = [path.join(dir, `${name}-base`), path.join(dir, `${name}-head`)];
  await runCli(args, base);
  await runCli(args, head, env);
  const [before, after] = [await readResults(base), await readResults(head)];
  return compareRuns(before.result, after.result, {}, { base: before.file, head: after.file });
}

/** The A/A section: two runs of one matrix compared, and the planted regression. */
export async function benchAa(options: { quick: boolean; onProgress?: (line: string) => void }): Promise<AaResult> {
  const matrix = options.quick ? QUICK_AA_MATRIX : [];
  const dir = await benchTempDir('membench-bench-aa-');
  try {
    options.onProgress?.(`A/A: membench run ${matrix.join(' ') || '(the default run)'}, twice`);
    const comparison = await twice(dir, 'aa', matrix);
    const checks = comparison.cells.flatMap((cell) => cell.checks);
    const latency = checks.filter((check) => check.metric === 'load time' || check.metric === 'save time');
    let planted: AaResult['planted'];
    if (!existsSync(PLANTED)) planted = { skipped: `${PLANTED} is not here (a repository checkout has it)` };
    else {
      const caught = {} as Record<PlantName, PlantCatch>;
      for (const name of PLANT_NAMES) {
        const plant = PLANTS[name];
        options.onProgress?.(`A/A: the planted regression ${plant.what}, run twice`);
        const flagged = flaggedOf(await twice(dir, `planted-${name}`, plant.matrix, plant.env));
        caught[name] = { flagged, expected: flagged.filter((figure) => figure.metric.includes(plant.figure)).length };
      }
      planted = caught;
    }
    return {
      matrix,
      cellsCompared: comparison.cells.length,
      figuresJudged: checks.filter((check) => check.verdict !== 'n/a').length,
      latencyJudged: latency.filter((check) => check.verdict !== 'n/a').length,
      latencyTooFew: latency.filter((check) => check.note?.startsWith('not enough samples')).length,
      ungated: checks.filter((check) => check.verdict === 'ungated').length,
      flagged: flaggedOf(comparison),
      planted,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The section as Markdown: false alarms beside the planted regression's catch. */
export function renderAa(result: AaResult): string {
  const { planted } = result;
  const list = (items: readonly FlaggedFigure[]) =>
    items.map((item) => `- \`${item.cell}\` ${item.metric} ${item.change}${item.note ? `: ${item.note}` : ''}`);
  return [
    '## A/A: the compare gate on two runs of the same code',
    '',
    `membench run ${result.matrix.join(' ') || '(the default run)'}, twice, then compare: ${result.cellsCompared} cells, ${result.figuresJudged} figures judged (latency: ${result.latencyJudged} judged, ${result.latencyTooFew} with too few samples to judge; ${result.ungated} figures of concurrent cells not gated).`,
    '',
    `- flagged between identical runs: **${result.flagged.length}** (target 0)`,
    ...list(result.flagged),
    ...('skipped' in planted
      ? [`- planted regressions: not run: ${planted.skipped}`]
      : PLANT_NAMES.flatMap((name) => {
          const { what, figure } = PLANTS[name];
          const verdict =
            planted[name].expected > 0
              ? `caught (a ${figure} figure failed)`
              : `NOT caught (no ${figure} figure failed)`;
          return [
            `- planted regression ${what} (one setting name): **${verdict}**, ${planted[name].flagged.length} figure(s) flagged`,
            ...list(planted[name].flagged),
          ];
        })),
  ].join('\n');
}
