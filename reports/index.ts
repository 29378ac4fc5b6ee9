/** Writes every report of a run into its output dir, atomically, never over a previous run unless asked. */
import { assertRunResult } from '../harness/results/read.js';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { MembenchError } from '../harness/core/errors.js';
import { checkNumber, SHARE_RANGE } from '../harness/core/numbers.js';
import { writeFileAtomic } from '../harness/core/fs.js';
import { removeOwnFiles, writeManifest } from '../harness/core/manifest.js';
import type { RunResult } from '../harness/results/schema.js';
import { renderChartsInParallel } from './chart-thread.js';
import { appendStepSummary, renderRunStepSummary } from './github-summary.js';
import { renderHtml } from './html.js';
import { renderJsonChunks } from './json.js';
import { renderJunit, type VerdictOptions } from './junit.js';
import { renderMarkdown } from './markdown.js';

export { renderConsoleSummary } from './console.js';
export { tableWidth } from './layout.js';
export { renderMarkdown } from './markdown.js';
export { renderJson, renderJsonChunks } from './json.js';
export { renderHtml } from './html.js';
export { renderJunit } from './junit.js';

/** The sub-dir holding the PNG charts. */
export const CHARTS_DIR = 'charts';

/** The files (and the charts dir) a run writes, by name. */
export const REPORT_FILES = ['results.json', 'report.md', 'report.html', 'junit.xml', CHARTS_DIR] as const;

/** What `--overwrite` removes from a dir written before manifests existed: the fixed report names, no chart (a PNG there may be the user's). */
export const REPORT_FILES_WITHOUT_MANIFEST = ['results.json', 'report.md', 'report.html', 'junit.xml'] as const;

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
    throw new MembenchError(
      'OUTPUT_EXISTS',
      `${dir} already holds a run (${existing.join(', ')}): choose another --out, or pass --overwrite to replace it`,
    );
  }
}

/** How a run's reports are written. */
export interface WriteRunOptions extends VerdictOptions {
  overwrite?: boolean;
  /** The command named in the dir's manifest (default `membench`). */
  command?: string;
  /** File the Markdown run summary is appended to: default `GITHUB_STEP_SUMMARY` (if set); null never appends. */
  stepSummary?: string | null;
  /** Told how long rendering the reports, rendering the charts and writing the files took (`--profile`). */
  onPhase?: (phase: 'reports' | 'charts' | 'writing', ms: number) => void;
  /**
   * The results file `result` was read from and its bytes as read (`membench report`): results.json
   * is written as those bytes, not rendered again, and left untouched where it is that file. A
   * render would give the same text for a file membench wrote, at a cost (a 131 MB file: ~8 s and
   * gigabytes of garbage), and drop what this version does not know.
   */
  resultsRead?: { file: string; bytes: Uint8Array };
  /** The charts, when the caller started drawing them already (renderChartsInParallel), e.g. before printing its summary. */
  charts?: Promise<[string, Buffer][]>;
}

/** Renders every report first (so a renderer failure writes nothing), then writes each file atomically. */
export async function writeRunOutput(result: RunResult, dir: string, options: WriteRunOptions = {}): Promise<string[]> {
  assertRunResult(result, 'writeRunOutput');
  if (typeof dir !== 'string' || dir.trim() === '')
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `writeRunOutput: expected the output dir as a path, got ${JSON.stringify(dir) ?? String(dir)}`,
    );
  if (options.recallThreshold !== undefined)
    checkNumber('writeRunOutput recallThreshold', options.recallThreshold, SHARE_RANGE);
  assertWritableOutDir(dir, options.overwrite ?? false);
  const verdict: VerdictOptions =
    options.recallThreshold === undefined ? {} : { recallThreshold: options.recallThreshold };
  let phaseStart = performance.now();
  const phaseDone = (phase: 'reports' | 'charts' | 'writing'): void => {
    options.onPhase?.(phase, performance.now() - phaseStart);
    phaseStart = performance.now();
  };
  // Drawn in a worker thread while the other reports are rendered here.
  const charts = options.charts ?? renderChartsInParallel(result);
  const read = options.resultsRead;
  const resultsInPlace = read !== undefined && path.resolve(read.file) === path.resolve(dir, 'results.json');
  const reports: [string, string | Uint8Array | Iterable<string>][] = [
    ['report.md', renderMarkdown(result)],
    ['report.html', renderHtml(result)],
    ['junit.xml', renderJunit(result, verdict)],
  ];
  // Rendered as it is written, a cell at a time; or the bytes read, as read.
  if (!resultsInPlace) reports.unshift(['results.json', read?.bytes ?? renderJsonChunks(result)]);
  phaseDone('reports');
  const outputs = [
    ...reports,
    ...(await charts).map(([name, png]): [string, Uint8Array | Iterable<string>] => [path.join(CHARTS_DIR, name), png]),
  ];
  phaseDone('charts');
  // One after the other: written at once (19 files, 38 fsyncs in a burst) they saved ~20 ms, and the
  // burst slowed the saves of a run beside it (the A/A compare gate read a cell's saves ×3.8 slower).
  const written: string[] = [];
  for (const [name, content] of outputs) {
    const file = path.join(dir, name);
    await writeFileAtomic(file, content);
    written.push(file);
  }
  // The previous run's files this one did not write again (a dropped scenario's chart) would
  // mislead: removed, as its manifest lists them; anything else in the dir is not membench's.
  const names = [...(resultsInPlace ? ['results.json'] : []), ...written.map((file) => path.relative(dir, file))];
  if (options.overwrite) await removeOwnFiles(dir, REPORT_FILES_WITHOUT_MANIFEST, new Set(names));
  await writeManifest(dir, options.command ?? 'membench', names);
  const summaryFile = options.stepSummary === undefined ? process.env.GITHUB_STEP_SUMMARY : options.stepSummary;
  if (summaryFile) await appendStepSummary(renderRunStepSummary(result, verdict), summaryFile);
  phaseDone('writing');
  return written;
}
