#!/usr/bin/env node
/**
 * Prints how a run's cells spread in time: for wall time (`durationMs`) and CPU (`cpuMs`, cells
 * run by this version or later), the cell count, the median, the slowest cell and its ratio to the
 * median, and how many cells took more than 5× the median, with the slowest few named; then the
 * same for each scenario's cells summed (a dataset question's cells share work — the first to
 * segment a text leaves it to the others — so a question's first cell is slower than its others by
 * design, while a pathological question shows in its sum).
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

/** The spread line of named values, and the slowest few. */
function spread(what, named, field) {
  const sorted = named.map(([, value]) => value).sort((a, b) => a - b);
  const mid = median(sorted);
  const max = sorted.at(-1);
  const above = sorted.filter((value) => value > 5 * mid).length;
  console.log(
    `${field}${what}: ${named.length} ${what ? 'scenarios' : 'cells'}, median ${mid.toFixed(1)} ms, max ${max.toFixed(1)} ms (${(max / mid).toFixed(1)}x), ${above} above 5x the median`,
  );
  for (const [id, value] of [...named].sort((a, b) => b[1] - a[1]).slice(0, Number(slowestArg)))
    console.log(`  ${value.toFixed(1)} ms (${(value / mid).toFixed(1)}x)  ${id}`);
}

for (const field of ['durationMs', 'cpuMs']) {
  const timed = cells.filter((cell) => typeof cell[field] === 'number');
  if (timed.length === 0) {
    console.log(`${field}: no cell records it`);
    continue;
  }
  spread(
    '',
    timed.map((cell) => [cell.id, cell[field]]),
    field,
  );
  const byScenario = new Map();
  for (const cell of timed)
    if (typeof cell.scenario === 'string')
      byScenario.set(cell.scenario, (byScenario.get(cell.scenario) ?? 0) + cell[field]);
  if (byScenario.size > 0) spread(' by scenario', [...byScenario], field);
}
