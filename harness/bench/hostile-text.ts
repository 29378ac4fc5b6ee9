/**
 * The "hostile text" section: one cell per question of a small LongMemEval_S-shaped file
 * (synthetic-longmemeval.ts) in which each of a few questions holds one message of 100,000
 * characters of a kind that defeats word and token cutting: English prose, unspaced Latin letters,
 * Chinese without spaces, base64, repeated emoji, a minified script, long lines; the other
 * questions hold none. Each cell is `--protocol longmemeval -s bm25` (both units), run in this
 * process one at a time; the figure is the worst cell over the median cell of the same file, which
 * stays near 1 when every per-message cost is linear in the message's length.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { seededRandom } from '../core/random.js';
import { runBenchmark } from '../run/runner.js';
import { syntheticLongMemEval } from './synthetic-longmemeval.js';

/** The length of each hostile message. */
export const HOSTILE_CHARS = 100_000;
/** Questions of the file without a hostile message: the median's baseline. */
const PLAIN_QUESTIONS = 3;

/** The worst cell over the median cell this section aims under. */
export const HOSTILE_TARGET_RATIO = 3;

/** Texts of `HOSTILE_CHARS` characters of each kind, seeded. */
export function hostileTexts(seed = 7): Record<string, string> {
  const next = seededRandom(seed);
  const fill = (unit: string): string => unit.repeat(Math.ceil(HOSTILE_CHARS / unit.length)).slice(0, HOSTILE_CHARS);
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

/** One question's cells. */
export interface HostileRow {
  kind: string;
  /** The slowest of its cells (one per unit), wall ms. */
  cellMs: number;
}

export interface HostileTextResult {
  chars: number;
  rows: HostileRow[];
  /** The median cell of the whole file, wall ms. */
  medianCellMs: number;
  worst: HostileRow;
  /** worst.cellMs / medianCellMs. */
  ratio: number;
}

/** Writes the file and times its cells. */
export async function benchHostileText(
  options: { onProgress?: (line: string) => void } = {},
): Promise<HostileTextResult> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'membench-bench-hostile-'));
  try {
    const texts = Object.entries(hostileTexts());
    const questions = [...syntheticLongMemEval({ questions: texts.length + PLAIN_QUESTIONS, seed: 31 })] as {
      question_id: string;
      haystack_sessions: { role: string; content: string }[][];
    }[];
    const kindOf = new Map<string, string>();
    texts.forEach(([kind, text], index) => {
      const question = questions[index]!;
      question.haystack_sessions[1]![0]!.content = text;
      kindOf.set(question.question_id, kind);
    });
    questions.slice(texts.length).forEach((question) => kindOf.set(question.question_id, 'plain'));
    const file = path.join(dir, 'hostile-longmemeval.json');
    await writeFile(file, JSON.stringify(questions));
    options.onProgress?.(
      `hostile text: ${questions.length} questions, ${texts.length} with a ${HOSTILE_CHARS}-character message`,
    );
    const result = await runBenchmark({
      datasets: [`longmemeval:${file}`],
      strategies: ['bm25'],
      protocol: 'longmemeval',
      workers: 1,
    });
    const slowest = new Map<string, number>();
    for (const cell of result.cells) {
      const kind = kindOf.get(cell.scenario.replace(/^longmemeval-/u, '')) ?? cell.scenario;
      slowest.set(kind, Math.max(slowest.get(kind) ?? 0, cell.durationMs));
    }
    const durations = result.cells.map((cell) => cell.durationMs).sort((a, b) => a - b);
    const medianCellMs = durations[Math.floor(durations.length / 2)] ?? 0;
    const rows = [...slowest].map(([kind, cellMs]) => ({ kind, cellMs }));
    const worst = rows.reduce((a, b) => (b.cellMs > a.cellMs ? b : a));
    return {
      chars: HOSTILE_CHARS,
      rows,
      medianCellMs,
      worst,
      ratio: medianCellMs > 0 ? worst.cellMs / medianCellMs : 0,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
