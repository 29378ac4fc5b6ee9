/**
 * A sweep into an output dir, as `membench tune` makes it: the endpoint and out dir checked, the
 * dir locked, the knob swept (`tune`) and the run behind the sweep written with every report.
 * `cli/tune.ts` maps flags onto it.
 */
import {
  assertWritableOutDir,
  defaultOutDir,
  REPORT_FILES_WITHOUT_MANIFEST,
  writeRunOutput,
} from '../../reports/index.js';
import { fullDiskProblem } from '../core/errors.js';
import { warnOverwriteWithoutManifest } from '../core/manifest.js';
import type { ResolvedSettings } from '../run/layers.js';
import { checkOutFlag, withOutDirLock } from '../run/out-lock.js';
import { checkDeveloperSwitches, RunInterrupted } from '../run/runner.js';
import { tune, type TuneOptions, type TuneResult } from '../run/tune.js';
import { checkRunEndpoint, type CellWatch } from './run-to-dir.js';

export interface TuneToDirOptions {
  /** Defaults < config file < flags (`resolveSettings`). */
  settings: ResolvedSettings;
  /** What to sweep: the strategy, its knob, the values, the recall target and the cost metric. */
  sweep: Pick<TuneOptions, 'strategy' | 'knob' | 'values' | 'targetRecall' | 'metric'>;
  /** Replace the reports of another run in the out dir. */
  overwrite?: boolean | undefined;
  onWarning: (warning: string) => void;
  /** Called once the out dir is locked, just before the first cell: what watches the cells. */
  onCells?: (() => CellWatch) | undefined;
  /** The sweep's verdict, before any file is written. */
  onResult?: ((result: TuneResult) => void) | undefined;
}

export type TuneToDirOutcome =
  | { status: 'interrupted'; out: string }
  | { status: 'finished'; out: string; tune: TuneResult; files: string[] };

/** Sweeps the knob and writes the run behind the sweep (its reports and the sweep chart) into the out dir. */
export async function tuneToDir(options: TuneToDirOptions): Promise<TuneToDirOutcome> {
  const { settings } = options;
  const overwrite = options.overwrite ?? false;
  checkRunEndpoint(settings.options);
  checkDeveloperSwitches();
  const out = settings.values.out ?? defaultOutDir(new Date());
  checkOutFlag(out);
  assertWritableOutDir(out, overwrite);
  await warnOverwriteWithoutManifest(out, overwrite, REPORT_FILES_WITHOUT_MANIFEST, options.onWarning);
  return withOutDirLock(out, 'membench tune', async (): Promise<TuneToDirOutcome> => {
    const watch = options.onCells?.() ?? {};
    let result: TuneResult;
    try {
      result = await tune({
        ...settings.options,
        ...options.sweep,
        workers: settings.workers,
        workerProcesses: true,
        signal: watch.signal,
        onWarning: options.onWarning,
        onProgress: watch.onProgress,
      });
    } catch (error) {
      if (error instanceof RunInterrupted) return { status: 'interrupted', out };
      throw error;
    } finally {
      watch.done?.();
    }
    options.onResult?.(result);
    let files: string[];
    try {
      files = await writeRunOutput(result.run, out, { overwrite, command: 'membench tune' });
    } catch (error) {
      // As run says a full disk; tune keeps no cells, so the way on is the sweep again.
      throw fullDiskProblem(
        error,
        `the sweep's reports in ${out} are incomplete (tune keeps no cells to resume)`,
        'run membench tune again with --overwrite',
      );
    }
    return { status: 'finished', out, tune: result, files };
  });
}
