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
import type { CellResult } from './schema.js';

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

/**
 * Replaces, in place, every ranking entry of `result`'s probes with the process's shared array for
 * it (equal ids, frozen: a change to one would be a change to all, so none is allowed), and
 * returns `result`. Call it where a result enters a long-lived list: the runner's results.
 */
export function shareRankings(result: CellResult): CellResult {
  if (result.status !== 'ok') return result;
  for (const probe of result.probes) {
    const ranking = probe.retrieved;
    if (!ranking) continue;
    for (let i = 0; i < ranking.length; i++) ranking[i] = sharedEntry(entryKey(ranking[i]!)) as string[];
  }
  return result;
}
