#!/usr/bin/env node
/**
 * Where the cells of a run spent their time, from the lines `MEMBENCH_CELL_SCHED=FILE` wrote
 * (harness/run/cell-sched.ts): the median cell's wall time, its own thread's time on a CPU, its
 * time waiting for one and its collection pauses; how many cells took more than 5× the median in
 * wall time and in thread time; and the slowest cells by wall time, each with the same split, so a
 * cell slow because the machine was busy shows apart from one slow on its own.
 *
 *   node scripts/cell-sched.mjs FILE [SLOWEST (default 10)]
 */
import { existsSync, readFileSync } from 'node:fs';
import { median } from 'simple-statistics';

const [file, slowestArg = '10'] = process.argv.slice(2);
if (file === undefined || !existsSync(file) || !/^\d+$/u.test(slowestArg)) {
  process.stderr.write('usage: node scripts/cell-sched.mjs FILE [SLOWEST]\n');
  process.exit(2);
}
const lines = readFileSync(file, 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line, index) => {
    try {
      return JSON.parse(line);
    } catch {
      process.stderr.write(`${file}:${index + 1}: not a JSON line\n`);
      process.exit(2);
    }
  });
if (lines.length === 0) {
  process.stderr.write(`${file}: no cell lines\n`);
  process.exit(2);
}

const mid = Object.fromEntries(
  ['wallMs', 'threadMs', 'waitMs', 'gcMs'].map((field) => [field, median(lines.map((line) => line[field]))]),
);
const ms = (value) => `${value.toFixed(1)} ms`;
const above = (field) => lines.filter((line) => line[field] > 5 * mid[field]);
console.log(
  `${lines.length} cells; median wall ${ms(mid.wallMs)}: its thread on a CPU ${ms(mid.threadMs)}, waiting for one ${ms(mid.waitMs)}, collecting ${ms(mid.gcMs)}`,
);
const slowWall = above('wallMs');
const slowThread = above('threadMs');
console.log(
  `above 5x the median: ${slowWall.length} in wall time, ${slowThread.length} in thread time (${slowWall.filter((line) => line.threadMs <= 5 * mid.threadMs).length} of the former only waited longer)`,
);
for (const line of [...lines].sort((a, b) => b.wallMs - a.wallMs).slice(0, Number(slowestArg))) {
  const gc = Object.entries(line.gc)
    .map(([kind, pause]) => `${kind} ${ms(pause)}`)
    .join(', ');
  console.log(
    `  wall ${ms(line.wallMs)} (${(line.wallMs / mid.wallMs).toFixed(1)}x): thread ${ms(line.threadMs)} (${(line.threadMs / mid.threadMs).toFixed(1)}x), waited ${ms(line.waitMs)}${gc ? `, collecting ${gc}` : ''}  ${line.id}`,
  );
}
