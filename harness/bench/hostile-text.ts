/**
 * The "hostile text" section: one cell per question of a small LongMemEval_S-shaped file
 * (synthetic-longmemeval.ts) in which each of a few questions holds one message of 100,000
 * characters of a kind that defeats word and token cutting: English prose, unspaced Latin letters,
 * Chinese without spaces, base64, repeated emoji, a minified script, long lines; as many other
 * questions hold none. Each cell is `--protocol longmemeval -s bm25` (both units, both rankers),
 * run in this process one at a time, after a warm-up question (not counted) that makes the process
 * load once what every process loads once (jieba's dictionary, the tokenizer's ranks, ICU's
 * segmenter). The figure is the worst cell against the median cell of the questions without a
 * hostile message, in wall time and in CPU time (the CPU this process spent between the cell's
 * start and its end: on a loaded machine, wall time measures the other jobs too). It stays near 1
 * when every per-message cost is linear in the message's length.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { median } from '../core/calibration.js';
import { seededRandom } from '../core/random.js';
import { runBenchmark } from '../run/runner.js';
import { syntheticLongMemEval } from './synthetic-longmemeval.js';

/** The length of each hostile message. */
export const HOSTILE_CHARS = 100_000;
/** Questions of the file without a hostile message: the median's baseline. */
const PLAIN_QUESTIONS = 5;
/** The warm-up question's sample of each hostile kind, in characters. */
const WARM_UP_CHARS = 2_000;

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
  /** The slowest of its cells (one per unit and ranker), wall ms. */
  cellMs: number;
  /** The most CPU one of its cells took, ms. */
  cellCpuMs: number;
}

export interface HostileTextResult {
  chars: number;
  rows: HostileRow[];
  /** The median cell of the questions without a hostile message, wall ms. */
  medianCellMs: number;
  /** The median CPU of a cell of those questions, ms. */
  medianCellCpuMs: number;
  /** The row of the slowest cell (wall). */
  worst: HostileRow;
  /** worst.cellMs / medianCellMs. */
  ratio: number;
  /** The most CPU a cell took over the median cell's CPU. */
  cpuRatio: number;
}

/** Writes the file and times its cells. */
export async function benchHostileText(
  options: { onProgress?: (line: string) => void } = {},
): Promise<HostileTextResult> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'membench-bench-hostile-'));
  try {
    const texts = Object.entries(hostileTexts());
    const questions = [...syntheticLongMemEval({ questions: 1 + texts.length + PLAIN_QUESTIONS, seed: 31 })] as {
      question_id: string;
      haystack_sessions: { role: string; content: string }[][];
    }[];
    const kindOf = new Map<string, string>();
    const [warmUp, ...measured] = questions;
    warmUp!.haystack_sessions[1]![0]!.content = texts.map(([, text]) => text.slice(0, WARM_UP_CHARS)).join('\n');
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
      `hostile text: ${measured.length} questions, ${texts.length} with a ${HOSTILE_CHARS}-character message, after a warm-up question`,
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
    const byKind = new Map<string, { wall: number[]; cpu: number[] }>();
    for (const cell of result.cells) {
      const kind = kindOf.get(cell.scenario.replace(/^longmemeval-/u, '')) ?? cell.scenario;
      if (kind === WARM_UP) continue;
      const entry = byKind.get(kind) ?? { wall: [], cpu: [] };
      entry.wall.push(cell.durationMs);
      entry.cpu.push(cpuOf.get(cell.id) ?? 0);
      byKind.set(kind, entry);
    }
    const rows = [...byKind].map(([kind, { wall, cpu }]) => ({
      kind,
      cellMs: Math.max(...wall),
      cellCpuMs: Math.max(...cpu),
    }));
    const plain = byKind.get(PLAIN) ?? { wall: [], cpu: [] };
    const medianCellMs = plain.wall.length ? median(plain.wall) : 0;
    const medianCellCpuMs = plain.cpu.length ? median(plain.cpu) : 0;
    const worst = rows.reduce((a, b) => (b.cellMs > a.cellMs ? b : a));
    const worstCpu = Math.max(...rows.map((row) => row.cellCpuMs));
    return {
      chars: HOSTILE_CHARS,
      rows,
      medianCellMs,
      medianCellCpuMs,
      worst,
      ratio: medianCellMs > 0 ? worst.cellMs / medianCellMs : 0,
      cpuRatio: medianCellCpuMs > 0 ? worstCpu / medianCellCpuMs : 0,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const WARM_UP = 'warm-up';
const PLAIN = 'plain';
