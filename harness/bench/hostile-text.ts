/**
 * The "hostile text" section: one cell per question of a small LongMemEval_S-shaped file
 * (synthetic-longmemeval.ts) in which each of a few questions holds one message of 100,000
 * characters of a kind that defeats word and token cutting: English prose, unspaced Latin letters,
 * Chinese without spaces, base64, repeated emoji, a minified script, long lines; as many other
 * questions hold none. Each cell is `--protocol longmemeval -s bm25` (both units, both rankers),
 * run in this process one at a time, after a warm-up question (not counted) that makes the process
 * load once what every process loads once (jieba's dictionary, the tokenizer's ranks, ICU's
 * segmenter). The judged figure is per question: the worst question's cells (summed) against the
 * median question without a hostile message, in wall time and in CPU time (the CPU this process
 * spent between a cell's start and its end: on a loaded machine, wall time measures the other jobs
 * too). It stays near 1 when every per-message cost is linear in the message's length. The cells of
 * a question share its segmenting (its first cell of a tokenizer segments, the others find the
 * terms), so a plain question's own first cell is 2–2.5× the median cell: the worst cell against
 * the median cell, printed beside, measures that sharing as much as the hostile message.
 */
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { median } from '../core/calibration.js';
import { sum } from 'simple-statistics';
import { seededRandom } from '../core/random.js';
import { runBenchmark } from '../run/runner.js';
import { syntheticLongMemEval } from './synthetic-longmemeval.js';
import { benchTempDir } from './scratch.js';

/** The length of each hostile message. */
export const HOSTILE_CHARS = 100_000;
/** Questions of the file without a hostile message: the median's baseline. */
const PLAIN_QUESTIONS = 5;
/**
 * Questions of each hostile kind, each with a text of its own (a text seen before would find its
 * terms kept): a kind's figure is the median of its questions, so one cell that met another job
 * on the machine or a collection does not make the kind's figure.
 */
export const HOSTILE_REPEATS = 3;
/** The warm-up question's sample of each hostile kind, in characters. */
const WARM_UP_CHARS = 2_000;

/** The worst kind's question over the median question without a hostile message: what this section aims under. */
export const HOSTILE_TARGET_RATIO = 3;

/** The seed of the section's texts. */
const HOSTILE_SEED = 7;

/**
 * Texts of `HOSTILE_CHARS` characters of each kind, seeded; another `variant` gives other texts of
 * the same kinds (the repeated units start `2 × variant` UTF-16 units later: never inside a
 * surrogate pair).
 */
export function hostileTexts(seed = HOSTILE_SEED, variant = 0): Record<string, string> {
  const next = seededRandom(seed + variant);
  const fill = (unit: string): string =>
    unit.repeat(Math.ceil(HOSTILE_CHARS / unit.length) + 1).slice(2 * variant, 2 * variant + HOSTILE_CHARS);
  const drawn = (from: number, span: number): string =>
    Array.from({ length: HOSTILE_CHARS }, () => String.fromCharCode(from + Math.floor(next() * span))).join('');
  const bytes = Uint8Array.from({ length: (HOSTILE_CHARS * 3) / 4 }, () => Math.floor(next() * 256));
  return {
    english: fill('My sister planted tomatoes in the raised beds, and I moved my savings to the new account. '),
    'unspaced latin': drawn(0x61, 26),
    'chinese unspaced': drawn(0x4e00, 3000),
    base64: Buffer.from(bytes).toString('base64').slice(0, HOSTILE_CHARS),
    emoji: fill('😀🎉👍🏽'),
    'minified js': fill(
      'function a(b,c){return b.map(function(d){return{x:d.x+c,"y":[1,2,3],z:"q"}})};var e=a([{x:1}],2);',
    ),
    'long lines': fill(`${'word '.repeat(2000)}\n`),
  };
}

/** One kind's questions: the median of each figure over them. */
export interface HostileRow {
  kind: string;
  /** Questions of this kind. */
  questions: number;
  /** A question's cells (one per unit and ranker) summed, wall ms. */
  questionMs: number;
  /** The CPU of a question's cells summed, ms. */
  questionCpuMs: number;
  /** A question's slowest cell, wall ms. */
  cellMs: number;
  /** The most CPU one of a question's cells took, ms. */
  cellCpuMs: number;
}

export interface HostileTextResult {
  chars: number;
  /** One per kind, the questions without a hostile message (PLAIN) last. */
  rows: HostileRow[];
  /** The median question without a hostile message (its cells summed), wall ms. */
  medianQuestionMs: number;
  /** The median CPU of such a question, ms. */
  medianQuestionCpuMs: number;
  /** The median cell of the questions without a hostile message, wall ms. */
  medianCellMs: number;
  /** The median CPU of a cell of those questions, ms. */
  medianCellCpuMs: number;
  /** The row of the slowest kind (wall). */
  worst: HostileRow;
  /** worst.questionMs / medianQuestionMs: the judged figure. */
  ratio: number;
  /** The costliest kind's question CPU over the median question's CPU. */
  cpuRatio: number;
  /** The slowest kind's slowest cell over the median cell (wall). */
  cellRatio: number;
  /** The costliest kind's most CPU in a cell over the median cell's CPU. */
  cellCpuRatio: number;
}

/** One timed cell of the file: its question, that question's kind (PLAIN for none), its wall and CPU ms. */
export interface HostileCell {
  question: string;
  kind: string;
  wallMs: number;
  cpuMs: number;
}

/** The section's figures from its timed cells (the warm-up question's left out). */
export function hostileFigures(cells: readonly HostileCell[], chars = HOSTILE_CHARS): HostileTextResult {
  const questions = new Map<string, { kind: string; wall: number[]; cpu: number[] }>();
  for (const cell of cells) {
    const entry = questions.get(cell.question) ?? { kind: cell.kind, wall: [], cpu: [] };
    entry.wall.push(cell.wallMs);
    entry.cpu.push(cell.cpuMs);
    questions.set(cell.question, entry);
  }
  const kinds = new Map<string, { wall: number[]; cpu: number[] }[]>();
  for (const { kind, ...timed } of questions.values()) {
    const ofKind = kinds.get(kind) ?? [];
    ofKind.push(timed);
    kinds.set(kind, ofKind);
  }
  const medianOf = (values: number[]): number => (values.length ? median(values) : 0);
  const rows: HostileRow[] = [...kinds]
    .sort(([a], [b]) => Number(a === PLAIN) - Number(b === PLAIN))
    .map(([kind, timed]) => ({
      kind,
      questions: timed.length,
      questionMs: medianOf(timed.map(({ wall }) => sum(wall))),
      questionCpuMs: medianOf(timed.map(({ cpu }) => sum(cpu))),
      cellMs: medianOf(timed.map(({ wall }) => Math.max(...wall))),
      cellCpuMs: medianOf(timed.map(({ cpu }) => Math.max(...cpu))),
    }));
  const plain = rows.find((row) => row.kind === PLAIN);
  const plainCells = kinds.get(PLAIN) ?? [];
  const medianCellMs = medianOf(plainCells.flatMap(({ wall }) => wall));
  const medianCellCpuMs = medianOf(plainCells.flatMap(({ cpu }) => cpu));
  const worst = rows.reduce((a, b) => (b.questionMs > a.questionMs ? b : a));
  const ratio = (value: number, base: number): number => (base > 0 ? value / base : 0);
  const most = (pick: (row: HostileRow) => number): number => Math.max(...rows.map(pick));
  return {
    chars,
    rows,
    medianQuestionMs: plain?.questionMs ?? 0,
    medianQuestionCpuMs: plain?.questionCpuMs ?? 0,
    medianCellMs,
    medianCellCpuMs,
    worst,
    ratio: ratio(worst.questionMs, plain?.questionMs ?? 0),
    cpuRatio: ratio(
      most((row) => row.questionCpuMs),
      plain?.questionCpuMs ?? 0,
    ),
    cellRatio: ratio(
      most((row) => row.cellMs),
      medianCellMs,
    ),
    cellCpuRatio: ratio(
      most((row) => row.cellCpuMs),
      medianCellCpuMs,
    ),
  };
}

/** Writes the file and times its cells. */
export async function benchHostileText(
  options: { onProgress?: (line: string) => void } = {},
): Promise<HostileTextResult> {
  const dir = await benchTempDir('membench-bench-hostile-');
  try {
    const variants = Array.from({ length: HOSTILE_REPEATS }, (_, variant) =>
      Object.entries(hostileTexts(HOSTILE_SEED, variant)),
    );
    const texts = variants.flat();
    const questions = [...syntheticLongMemEval({ questions: 1 + texts.length + PLAIN_QUESTIONS, seed: 31 })] as {
      question_id: string;
      haystack_sessions: { role: string; content: string }[][];
    }[];
    const kindOf = new Map<string, string>();
    const [warmUp, ...measured] = questions;
    warmUp!.haystack_sessions[1]![0]!.content = variants[0]!.map(([, text]) => text.slice(0, WARM_UP_CHARS)).join('\n');
    kindOf.set(warmUp!.question_id, WARM_UP);
    texts.forEach(([kind, text], index) => {
      const question = measured[index]!;
      question.haystack_sessions[1]![0]!.content = text;
      kindOf.set(question.question_id, kind);
    });
    measured.slice(texts.length).forEach((question) => kindOf.set(question.question_id, PLAIN));
    const file = path.join(dir, 'hostile-longmemeval.json');
    await writeFile(file, JSON.stringify(questions));
    options.onProgress?.(
      `hostile text: ${measured.length} questions, ${texts.length} with a ${HOSTILE_CHARS}-character message (${HOSTILE_REPEATS} of each kind), after a warm-up question`,
    );
    // Cells run in this process one after another (one worker): the CPU between two cells' ends is the later one's.
    const cpuOf = new Map<string, number>();
    let last = process.cpuUsage();
    const result = await runBenchmark({
      datasets: [`longmemeval:${file}`],
      strategies: ['bm25'],
      protocol: 'longmemeval',
      workers: 1,
      onProgress: (event) => {
        const now = process.cpuUsage();
        if (event.type === 'cell') cpuOf.set(event.result.id, (now.user - last.user + now.system - last.system) / 1000);
        last = now;
      },
    });
    const cells: HostileCell[] = [];
    for (const cell of result.cells) {
      const question = cell.scenario.replace(/^longmemeval-/u, '');
      const kind = kindOf.get(question) ?? cell.scenario;
      if (kind === WARM_UP) continue;
      cells.push({ question, kind, wallMs: cell.durationMs, cpuMs: cpuOf.get(cell.id) ?? 0 });
    }
    return hostileFigures(cells);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const WARM_UP = 'warm-up';
/** The kind of a question without a hostile message. */
export const PLAIN = 'plain';
