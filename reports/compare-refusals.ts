/**
 * What `compare` refuses or warns about before checking a figure: runs that cannot be matched
 * (exit 2), header differences that make figures less comparable, and latency timed on two machines.
 */
import { MembenchError } from '../harness/core/errors.js';
import { counted } from '../harness/core/plural.js';
import { repeatedCellId } from '../harness/results/read.js';
import type { RunHeader, RunResult } from '../harness/results/schema.js';

/** Header differences that make numbers less comparable (tokenizer, model, seed...), each with why. */
export function headerNotes(base: RunHeader, head: RunHeader): string[] {
  const fields: [string, (header: RunHeader) => string, string][] = [
    ['tokenizer', (header) => header.tokenizer.encoding, 'token counts are not comparable'],
    ['model', (header) => header.model, 'recall and maintenance tokens depend on the model'],
    ['embedder', (header) => header.embedder, 'retrieval depends on the embedder'],
    ['seed', (header) => String(header.seed), 'seeded choices differ'],
    ['trials', (header) => String(header.trials), 'cell ids differ with the number of trials'],
    ['platform', (header) => header.platform, 'latencies come from different machines'],
  ];
  return fields.flatMap(([name, read, why]) =>
    read(base) === read(head) ? [] : [`${name} differs (${read(base)} → ${read(head)}): ${why}`],
  );
}

/** Why latency is left out under `same-machine`, or undefined when both runs were timed on one machine. */
export function otherMachine(base: RunHeader, head: RunHeader): string | undefined {
  if (base.machine === undefined || head.machine === undefined)
    return `${base.machine === undefined ? 'base' : 'head'} does not record the machine it was timed on (older results, or a merge of shards from several machines)`;
  return base.machine === head.machine
    ? undefined
    : `base and head were timed on different machines (${base.machine} → ${head.machine})`;
}

/** Refuses runs that cannot be compared: an empty head, no cell in common, or a cell id twice in one run (exit 2). */
export function assertComparable(base: RunResult, head: RunResult, names: { base: string; head: string }): void {
  for (const [side, run] of [
    [names.base, base],
    [names.head, head],
  ] as const) {
    const id = repeatedCellId(run);
    if (id !== undefined)
      throw new MembenchError(
        'INVALID_ARGUMENT',
        `${side} holds two cells with id "${id}": they cannot be matched (two scenarios with one name?); re-run with unique scenario names`,
      );
  }
  if (head.cells.length === 0)
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `${names.head} has no cells: nothing to compare with ${names.base} (${counted(base.cells.length, 'cells')}); was the run stopped before any cell finished?`,
    );
  const baseIds = new Set(base.cells.map((cell) => cell.id));
  if (!head.cells.some((cell) => baseIds.has(cell.id))) {
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `${names.head} (${counted(head.cells.length, 'cells')}, e.g. ${head.cells[0]!.id}) has no cell in common with ${names.base} (${counted(base.cells.length, 'cells')}${base.cells[0] ? `, e.g. ${base.cells[0].id}` : ''}): they ran different matrices; compare runs of the same scenarios and strategies`,
    );
  }
}
