#!/usr/bin/env node
/**
 * Prints how a run's cells spread in time: for wall time (`durationMs`) and CPU (`cpuMs`, cells
 * run by this version or later), the cell count, the median, the slowest cell and its ratio to the
 * median, and how many cells took more than 5× the median, with the slowest few named.
 *
 *   node scripts/cell-times.mjs RUN_DIR_OR_RESULTS_JSON [SLOWEST (default 5)]
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { median } from 'simple-statistics';

const [target, slowestArg = '5'] = process.argv.slice(2);
if (target === undefined || !existsSync(target) || !/^\d+$/u.test(slowestArg)) {
  process.stderr.write('usage: node scripts/cell-times.mjs RUN_DIR_OR_RESULTS_JSON [SLOWEST]\n');
  process.exit(2);
}
const file = statSync(target).isDirectory() ? path.join(target, 'results.json') : target;
const { cells } = JSON.parse(readFileSync(file, 'utf8'));

for (const field of ['durationMs', 'cpuMs']) {
  const timed = cells.filter((cell) => typeof cell[field] === 'number');
  if (timed.length === 0) {
    console.log(`${field}: no cell records it`);
    continue;
  }
  const sorted = timed.map((cell) => cell[field]).sort((a, b) => a - b);
  const mid = median(sorted);
  const max = sorted.at(-1);
  const above = sorted.filter((value) => value > 5 * mid).length;
  const slowest = [...timed].sort((a, b) => b[field] - a[field]).slice(0, Number(slowestArg));
  console.log(
    `${field}: ${timed.length} cells, median ${mid.toFixed(1)} ms, max ${max.toFixed(1)} ms (${(max / mid).toFixed(1)}x), ${above} above 5x the median`,
  );
  for (const cell of slowest)
    console.log(`  ${cell[field].toFixed(1)} ms (${(cell[field] / mid).toFixed(1)}x)  ${cell.id}`);
}
