/** What `run`, `tune` and `judge` share around their library call: progress output, Ctrl-C handling, the out dir's warnings, the judge gate's words. */
import path from 'node:path';
import { SingleBar } from 'cli-progress';
import { formatMs } from '../../reports/summary.js';
import { visibleControls } from '../core/text.js';
import type { ProgressEvent } from '../run/options.js';
import type { JudgeGate } from '../results/judges.js';

/** Per strategy setting of a scenario group: scenarios (a LongMemEval file's questions) done of planned, and an ETA from this run's pace for that setting. */
export class GroupProgress {
  private readonly units = new Map<string, { total: number; done: number; ran: number; ms: number }>();

  constructor(
    plan: readonly { setting: string; group?: string; done: boolean }[],
    private readonly workers = 1,
  ) {
    for (const cell of plan) {
      if (cell.group === undefined) continue;
      const unit = this.units.get(GroupProgress.key(cell.group, cell.setting)) ?? { total: 0, done: 0, ran: 0, ms: 0 };
      unit.total++;
      if (cell.done) unit.done++;
      this.units.set(GroupProgress.key(cell.group, cell.setting), unit);
    }
  }

  private static key(group: string, setting: string): string {
    return `${group} · ${setting}`;
  }

  /**
   * Counts a finished cell; returns "GROUP · SETTING 40/500 questions, ETA 1m20s" for a grouped one ("scenarios" outside LongMemEval)
   * (without " · SETTING" when `named` is false: a line that names the cell already).
   */
  finished(cell: { group?: string; setting: string; durationMs: number }, named = true): string | undefined {
    if (cell.group === undefined) return undefined;
    const key = GroupProgress.key(cell.group, cell.setting);
    const unit = this.units.get(key);
    if (!unit) return undefined;
    unit.done++;
    unit.ran++;
    unit.ms += cell.durationMs;
    const left = unit.total - unit.done;
    const eta = left > 0 ? `, ETA ${formatDuration(((unit.ms / unit.ran) * left) / this.workers)}` : ', done';
    // A LongMemEval file's scenarios are one question each; LoCoMo's and a generated suite's are conversations of many.
    const counted = cell.group.startsWith('longmemeval:') ? 'questions' : 'scenarios';
    return `${named ? key : cell.group} ${unit.done}/${unit.total} ${counted}${eta}`;
  }
}

/**
 * What a command wrote into a run's dir, on one line that fits a terminal however many charts it
 * drew: `OUT/ (results.json, report.md, report.html, junit.xml and 7 charts in charts/)`.
 */
export function writtenFiles(out: string, files: readonly string[]): string {
  const charts = files.filter((file) => file.endsWith('.png'));
  const reports = files.filter((file) => !file.endsWith('.png')).map((file) => path.relative(out, file) || file);
  const chartWord = charts.length
    ? ` and ${charts.length} chart${charts.length === 1 ? '' : 's'} in ${path.relative(out, path.dirname(charts[0]!)) || '.'}/`
    : '';
  return `${path.relative(process.cwd(), out) || '.'}/ (${reports.join(', ')}${chartWord})`;
}

/** The line `run` and `tune` print on stderr for a failed cell; its id names a setting from the user's flags or files, so control characters are escaped. */
export function failedLine(cellId: string, reasons: string): string {
  return visibleControls(`FAILED ${cellId}: ${reasons}`);
}

/** 75 s → "1m15s". */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  return seconds >= 60 ? `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s` : `${seconds}s`;
}

/** How often an import's progress is said: on a terminal its line is redrawn at most this often; in a log, a line at most every IMPORT_LOG_MS (none for a shorter import). */
const IMPORT_TERMINAL_MS = 250;
const IMPORT_LOG_MS = 10_000;

/**
 * A `--dataset` import's progress (the `import` events, before the cells are planned): a file of
 * LongMemEval_M's size takes minutes to import, which without it were minutes of silence. On a
 * terminal one line redrawn in place and cleared when the cells start; in a log a line every 10 s.
 */
export class ImportProgress {
  private said = performance.now();
  private drawn = false;

  constructor(private readonly tty: boolean) {}

  heard(event: Pick<Extract<ProgressEvent, { type: 'import' }>, 'dataset' | 'read' | 'total'>): void {
    const now = performance.now();
    if (now - this.said < (this.tty ? IMPORT_TERMINAL_MS : IMPORT_LOG_MS)) return;
    this.said = now;
    const mb = (bytes: number): string => Math.round(bytes / 1e6).toLocaleString('en-US');
    const line = visibleControls(
      `membench: importing ${event.dataset}: ${mb(event.read)} of ${mb(event.total)} MB read (${Math.floor((100 * event.read) / Math.max(event.total, 1))} %)`,
    );
    process.stderr.write(this.tty ? `\r${line}\x1b[K` : `${line}\n`);
    this.drawn = this.tty;
  }

  /** Clears the terminal's line once the import is over. */
  done(): void {
    if (this.drawn) process.stderr.write('\r\x1b[K');
    this.drawn = false;
  }
}

/** Progress on stderr: a bar with ETA on a terminal, one line per cell otherwise; a scenario group's questions counted per strategy; nothing when quiet. */
export function progressReporter(
  quiet: boolean,
  tty = Boolean(process.stderr.isTTY),
  workers = 1,
): { onProgress: (event: ProgressEvent) => void; stop: () => void } {
  if (quiet) return { onProgress: () => undefined, stop: () => undefined };
  let groups = new GroupProgress([], workers);
  const importing = new ImportProgress(tty);
  if (tty) {
    const bar = new SingleBar({
      format: 'membench |{bar}| {value}/{total} cells | {percentage}% | ETA {eta_formatted} | {last}',
      hideCursor: true,
      etaBuffer: 20,
    });
    let started = false;
    return {
      onProgress: (event) => {
        if (event.type === 'import') return importing.heard(event);
        if (event.type === 'start') {
          importing.done();
          groups = new GroupProgress(event.units, workers);
          bar.start(event.cells, event.finished, { last: event.finished ? `${event.finished} finished earlier` : '' });
          started = true;
        } else
          bar.increment({
            last: visibleControls(
              groups.finished(event.result) ?? `${event.result.id}${event.result.status === 'ok' ? '' : ' ERROR'}`,
            ),
          });
      },
      stop: () => {
        importing.done();
        if (started) bar.stop();
        started = false;
      },
    };
  }
  // A group's name or a cell's setting comes from the user's files: its control characters are printed as escapes.
  const log = (line: string): boolean => process.stderr.write(`${visibleControls(line)}\n`);
  /** Cells finished, those of an earlier attempt included: `[i/n]` counts cells done, not plan positions (cells run costliest first). */
  let done = 0;
  return {
    onProgress: (event) => {
      if (event.type === 'import') return importing.heard(event);
      if (event.type === 'start') {
        groups = new GroupProgress(event.units, workers);
        done = event.finished;
        const running = event.cells - event.finished;
        log(
          `membench: running ${running} cell${running === 1 ? '' : 's'}${event.finished ? ` (${event.finished} of ${event.cells} finished earlier)` : ''}`,
        );
        return;
      }
      const { result: cell } = event;
      const recall = cell.status === 'ok' ? cell.recall.contextRecall.value : null;
      const status =
        cell.status === 'ok' ? `recall ${recall === null ? '–' : recall.toFixed(2)}` : `ERROR ${cell.error}`;
      // The line starts with the cell's id (scenario/setting): the group's part names no setting again.
      const group = groups.finished(cell, false);
      done++;
      log(
        `[${done}/${event.cells}] ${cell.id}  ${status}  ${formatMs(cell.durationMs)} ms${group ? `  (${group})` : ''}`,
      );
    },
    stop: () => undefined,
  };
}

/**
 * Ctrl-C (and SIGTERM, e.g. a CI job cancelled) abort the signal instead of killing the process;
 * a second one exits at once. Either way the exit code is 130, as documented for an interrupt.
 */
export function interruptOnSignals(): { signal: AbortSignal; dispose: () => void; exitCode: () => number } {
  const controller = new AbortController();
  const code = 130;
  const handlers = (['SIGINT', 'SIGTERM'] as const).map((name) => {
    const handler = (): void => {
      if (controller.signal.aborted) process.exit(code);
      controller.abort();
    };
    process.on(name, handler);
    return [name, handler] as const;
  });
  return {
    signal: controller.signal,
    dispose: () => handlers.forEach(([name, handler]) => process.off(name, handler)),
    exitCode: () => code,
  };
}

/** Says on stderr what the judges that just ran did not measure and why their gate fails (`checkJudged`); returns whether it failed. */
export function reportJudgeGate(gate: JudgeGate): boolean {
  for (const warning of gate.warnings) process.stderr.write(`${warning}\n`);
  for (const failure of gate.failures) process.stderr.write(`FAILED judge: ${failure}\n`);
  return gate.failures.length > 0;
}
