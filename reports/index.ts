/** Writes every report of a run into its output dir, atomically, never over a previous run unless asked. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { MembenchError } from '../harness/errors.js';
import { writeFileAtomic } from '../harness/fs.js';
import type { RunResult } from '../harness/results.js';
import { renderJson } from './json.js';
import { renderMarkdown } from './markdown.js';

export { renderConsoleSummary } from './console.js';
export { renderMarkdown } from './markdown.js';
export { renderJson } from './json.js';

/** The files a run writes, by name. */
export const REPORT_FILES = ['results.json', 'report.md'] as const;

/** A fresh timestamped dir under `.membench/` (a suffix is added if two runs start in the same second). */
export function defaultOutDir(now: Date, base = '.membench'): string {
  const stamp = now.toISOString().replace(/[-:]/gu, '').replace('T', '-').slice(0, 15);
  let dir = path.join(base, `run-${stamp}`);
  for (let n = 2; existsSync(dir); n++) dir = path.join(base, `run-${stamp}-${n}`);
  return dir;
}

/** Refuses a dir that already holds a run's files unless `overwrite`. Call before running, so no work is wasted. */
export function assertWritableOutDir(dir: string, overwrite: boolean): void {
  if (overwrite) return;
  const existing = REPORT_FILES.filter((file) => existsSync(path.join(dir, file)));
  if (existing.length > 0) {
    throw new MembenchError('OUTPUT_EXISTS', `${dir} already holds a run (${existing.join(', ')}): choose another --out, or pass --overwrite to replace it`);
  }
}

export async function writeRunOutput(result: RunResult, dir: string, options: { overwrite?: boolean } = {}): Promise<string[]> {
  assertWritableOutDir(dir, options.overwrite ?? false);
  const outputs: [string, string][] = [
    ['results.json', renderJson(result)],
    ['report.md', renderMarkdown(result)],
  ];
  const written: string[] = [];
  for (const [name, content] of outputs) {
    const file = path.join(dir, name);
    await writeFileAtomic(file, content);
    written.push(file);
  }
  return written;
}
