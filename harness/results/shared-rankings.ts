/**
 * One array per distinct ranking entry in the membench process. A probe's `retrieved` lists, per
 * item ranked, the scenario's message ids it stands for (`["D4:5"]`, or a session's ids), and every
 * cell that ranks the same scenario lists the same entries again. Each cell's result arrives from
 * its worker as fresh objects (the IPC channel copies them), so the process held an array and a
 * string per entry per cell: LoCoMo's protocol run with `--keep-rankings` kept 5.6 million entries
 * of 3,051 distinct ones, 776 MB of heap for 131 MB of JSON. Sharing the entries brings that to
 * ~100 MB; the top-50 rankings of a plain protocol run shrink the same way.
 */
import { boundedMemo, MEMO_CHARS } from '../core/memo.js';
import type { CellResult, RunResult } from './schema.js';

/**
 * The shared, frozen array for an entry, by a key that cannot collide between shapes: `1` and the
 * id for an entry of one id (nearly all of them: a message), `n` and the entry's JSON otherwise.
 * Bounded like every memo of the process: an entry whose shared array was dropped gets a new one,
 * which costs memory, never correctness.
 */
const sharedEntry = boundedMemo(MEMO_CHARS.sentences, (key): readonly string[] =>
  Object.freeze(key.startsWith('1') ? [key.slice(1)] : (JSON.parse(key.slice(1)) as string[])),
);

/** The key of an entry for `sharedEntry`. */
function entryKey(entry: readonly string[]): string {
  return entry.length === 1 ? `1${entry[0]}` : `n${JSON.stringify(entry)}`;
}

/** Replaces, in place, each entry of `ranking` with the process's shared array for it (equal ids, frozen: a change to one would be a change to all, so none is allowed). */
function shareEntries(ranking: string[][]): void {
  for (let i = 0; i < ranking.length; i++) ranking[i] = sharedEntry(entryKey(ranking[i]!)) as string[];
}

/**
 * Shares every ranking entry of `result`'s probes (`shareEntries`) and returns `result`. Call it
 * where a result enters a long-lived list: the runner's results.
 */
export function shareRankings(result: CellResult): CellResult {
  if (result.status !== 'ok') return result;
  for (const probe of result.probes) if (probe.retrieved) shareEntries(probe.retrieved);
  return result;
}

/** Whether a raw value is a ranking: a list of lists of ids. */
function isRanking(value: unknown): value is string[][] {
  return (
    Array.isArray(value) && value.every((entry) => Array.isArray(entry) && entry.every((id) => typeof id === 'string'))
  );
}

/**
 * Takes every well-formed probe `retrieved` out of results as read (`JSON.parse`'s output, before
 * the schema checks it) and leaves an empty list in its place: the schema would copy and check
 * millions of entries one by one (a LoCoMo protocol run kept with `--keep-rankings` holds 5.6
 * million), and the run read back would hold an array and a string per entry. A malformed one is
 * left where it is, for the schema to refuse with its path. `restore` puts them back, shared, into
 * the checked results (same cell and probe order; the key keeps its place).
 */
export function takeRankings(data: { cells: unknown[] }): (checked: RunResult) => void {
  const taken: { cell: number; probe: number; ranking: string[][] }[] = [];
  data.cells.forEach((cell, c) => {
    const probes = typeof cell === 'object' && cell !== null ? (cell as { probes?: unknown }).probes : undefined;
    if (!Array.isArray(probes)) return;
    probes.forEach((probe: unknown, p) => {
      if (typeof probe !== 'object' || probe === null) return;
      const ranking = (probe as { retrieved?: unknown }).retrieved;
      if (!isRanking(ranking)) return;
      taken.push({ cell: c, probe: p, ranking });
      (probe as { retrieved: unknown }).retrieved = [];
    });
  });
  return (checked) => {
    for (const { cell, probe, ranking } of taken) {
      const result = checked.cells[cell];
      const record = result?.status === 'ok' ? result.probes[probe] : undefined;
      if (!record) continue;
      shareEntries(ranking);
      record.retrieved = ranking;
    }
  };
}
