/**
 * A resumable run dir: `plan.json` (the options that plan the matrix, and the matrix's digest)
 * and `cells/<position>.json`, one file per finished cell, each written atomically. A run killed
 * at any moment leaves whole files only; `--resume DIR` re-plans from plan.json, refuses a
 * different matrix, and runs only the cells that have no file yet or whose file holds a cell in
 * error (a run that ends with cells in error keeps both files for that).
 */
import { existsSync } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { LiveProviderSettings } from './cell.js';
import { MembenchError, errorMessage } from '../core/errors.js';
import { writeFileAtomic } from '../core/fs.js';
import { removeOwnFiles } from '../core/manifest.js';
import { MEMBENCH_VERSION, membenchCommit } from '../core/package-info.js';
import { cellResultSchema, type CellResult } from '../results/schema.js';
import type { CellStore, RunOptions } from './options.js';
import { settingEntries, type SettingKey, type Settings } from './settings.js';

/** The run's options and matrix digest, in the run dir while the run is unfinished. */
export const PLAN_FILE = 'plan.json';
/** One `<position>.json` per finished cell, in the run dir while the run is unfinished. */
export const CELLS_DIR = 'cells';

/** The RunOptions fields of the settings that decide a run's matrix and results (`planned` in the table), the live ones as `live`. */
type PlannedField = {
  [K in SettingKey]: Settings[K] extends { planned: true }
    ? Settings[K] extends { live: string }
      ? 'live'
      : Settings[K] extends { option: infer Name extends string }
        ? Name
        : K
    : never;
}[SettingKey];

/** The options that decide a run's matrix and results: what plan.json keeps (never the API key). */
export type PlannedOptions = Pick<RunOptions, Exclude<PlannedField, 'live'>> & {
  live?: Omit<LiveProviderSettings, 'apiKey'>;
};

const plannedRows = settingEntries().filter(([, spec]) => spec.planned);

/** The keys of PlannedOptions, in the table's order (messages list them so). */
export const PLANNED_KEYS = [
  ...new Set(plannedRows.map(([key, spec]) => (spec.live ? 'live' : (spec.option ?? key)))),
] as PlannedField[];

const planFile = z.object({
  membench: z.object({ version: z.string(), commit: z.string().nullable() }),
  options: z.object({
    ...Object.fromEntries(
      plannedRows.flatMap(([key, spec]) => (spec.live ? [] : [[spec.option ?? key, spec.schema.optional()]])),
    ),
    live: z
      .object({
        ...Object.fromEntries(
          plannedRows.flatMap(([, spec]) => (spec.live ? [[spec.live, spec.schema.optional()]] : [])),
        ),
        temperature: z.number().optional(),
      })
      .optional(),
  }),
  digest: z.string().optional(),
  cells: z.array(z.string()).optional(),
});
/** What plan.json holds. */
interface PlanFile {
  membench: { version: string; commit: string | null };
  options: PlannedOptions;
  digest?: string;
  cells?: string[];
}

/** The planned options of `options`, undefined ones left out (so plan.json and comparisons stay minimal). */
export function plannedOptions(options: RunOptions): PlannedOptions {
  const { apiKey: _key, ...live } = options.live ?? {};
  const picked: Record<string, unknown> = { ...options, live: Object.keys(live).length ? live : undefined };
  return Object.fromEntries(
    PLANNED_KEYS.flatMap((key) => (picked[key] === undefined ? [] : [[key, picked[key]]])),
  ) as PlannedOptions;
}

/** Refuses a dir holding an interrupted run unless `overwrite` (which then clears it): call before a fresh run. */
export async function assertNoInterruptedRun(dir: string, overwrite: boolean): Promise<void> {
  if (!existsSync(path.join(dir, PLAN_FILE))) return;
  if (!overwrite) {
    const finished = (await readdir(path.join(dir, CELLS_DIR)).catch(() => [] as string[])).filter((name) =>
      name.endsWith('.json'),
    ).length;
    throw new MembenchError(
      'OUTPUT_EXISTS',
      `${dir} holds an interrupted run (${PLAN_FILE}, ${finished} finished cell${finished === 1 ? '' : 's'}): resume it with membench run --resume ${dir}, or pass --overwrite to start over`,
    );
  }
  await clearRunState(dir);
}

/** Removes plan.json and the cell files (after the reports are written, or to start over). */
export async function clearRunState(dir: string): Promise<void> {
  await rm(path.join(dir, CELLS_DIR), { recursive: true, force: true });
  await rm(path.join(dir, PLAN_FILE), { force: true });
}

/** The cell store of a run dir: a fresh one writes plan.json once the matrix is planned; a resumed one checks it. */
export class RunDir implements CellStore {
  private constructor(
    readonly dir: string,
    private plan: PlanFile,
    private readonly resumed: boolean,
    private readonly onWarning: (message: string) => void,
    private readonly replaces: readonly string[] = [],
  ) {}

  /**
   * A fresh run in `dir` (check it first with assertWritableOutDir and assertNoInterruptedRun).
   * `replaces`: with --overwrite, the names of an earlier run's files for a dir without a manifest;
   * the files its manifest lists otherwise (exactly those: a user's own file stays). Removed once
   * the matrix is planned and before this run's plan is written, so a run that then dies never
   * leaves the old results looking like its own, nor its plan beside them.
   */
  static fresh(
    dir: string,
    options: RunOptions,
    onWarning: (message: string) => void = () => undefined,
    replaces: readonly string[] = [],
  ): RunDir {
    return new RunDir(
      dir,
      { membench: { version: MEMBENCH_VERSION, commit: membenchCommit() }, options: plannedOptions(options) },
      false,
      onWarning,
      replaces,
    );
  }

  /** The interrupted run in `dir`; its options replan the same matrix. */
  static async resume(dir: string, onWarning: (message: string) => void = () => undefined): Promise<RunDir> {
    const file = path.join(dir, PLAN_FILE);
    const text = await readFile(file, 'utf8').catch(() => undefined);
    if (text === undefined) {
      const complete = existsSync(path.join(dir, 'results.json'));
      throw new MembenchError(
        'INVALID_ARGUMENT',
        complete
          ? `--resume ${dir}: the run is complete (results.json, no ${PLAN_FILE}): nothing to resume; re-render it with membench report ${dir}`
          : `--resume ${dir}: no ${PLAN_FILE}: not a run dir started by membench run (or its plan was removed)`,
      );
    }
    let parsed: ReturnType<typeof planFile.safeParse>;
    try {
      parsed = planFile.safeParse(JSON.parse(text));
    } catch (error) {
      throw new MembenchError('INVALID_ARGUMENT', `${file}: not JSON (${errorMessage(error)})`);
    }
    if (!parsed.success)
      throw new MembenchError(
        'INVALID_ARGUMENT',
        `${file}: not a membench run plan: ${parsed.error.issues[0]!.path.join('.') || '(document)'}: ${parsed.error.issues[0]!.message}`,
      );
    const { version, commit } = parsed.data.membench;
    const current = membenchCommit();
    // An unknown commit (not a checkout, or git did not answer) is no evidence of a change.
    if (version !== MEMBENCH_VERSION || (commit !== null && current !== null && commit !== current)) {
      throw new MembenchError(
        'INVALID_ARGUMENT',
        `--resume ${dir}: the run began with membench ${version}${commit ? ` (${commit.slice(0, 12)})` : ''}, this is ${MEMBENCH_VERSION}${current ? ` (${current.slice(0, 12)})` : ''}: its cells would mix two versions; start a fresh run`,
      );
    }
    return new RunDir(dir, parsed.data as PlanFile, true, onWarning);
  }

  /** The options the run was planned with. */
  get options(): PlannedOptions {
    return this.plan.options;
  }

  async open(planned: { digest: string; ids: readonly string[] }): Promise<ReadonlyMap<number, CellResult>> {
    if (!this.resumed) {
      this.plan = { ...this.plan, digest: planned.digest, cells: [...planned.ids] };
      // The replaced run's files go first: a run killed between the two steps leaves neither its
      // plan beside the old results (which `report` would show as this run's) nor a half of both.
      if (this.replaces.length > 0) await removeOwnFiles(this.dir, this.replaces);
      await writeFileAtomic(path.join(this.dir, PLAN_FILE), `${JSON.stringify(this.plan, null, 2)}\n`);
      return new Map();
    }
    if (this.plan.digest !== planned.digest) {
      throw new MembenchError(
        'INVALID_ARGUMENT',
        `--resume ${this.dir}: the matrix is not the one the run began with (a scenario file, dataset or strategy option changed?): start a fresh run`,
      );
    }
    return this.finishedCells(planned.ids);
  }

  async save(position: number, result: CellResult): Promise<void> {
    await writeFileAtomic(path.join(this.dir, CELLS_DIR, `${position}.json`), JSON.stringify(result));
  }

  /** The cell files that belong to the plan; a cell in error and anything unreadable run again (with a warning). */
  private async finishedCells(ids: readonly string[]): Promise<Map<number, CellResult>> {
    const cells = new Map<number, CellResult>();
    const errored: string[] = [];
    const names = await readdir(path.join(this.dir, CELLS_DIR)).catch(() => [] as string[]);
    for (const name of names) {
      const match = /^(\d+)\.json$/u.exec(name);
      if (!match) continue;
      const position = Number(match[1]);
      const file = path.join(this.dir, CELLS_DIR, name);
      try {
        const parsed = cellResultSchema.safeParse(JSON.parse(await readFile(file, 'utf8')));
        if (!parsed.success)
          throw new Error(
            `not a cell result (${parsed.error.issues
              .slice(0, 2)
              .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
              .join('; ')})`,
          );
        const cell = parsed.data;
        if (cell.id !== ids[position])
          throw new Error(
            `holds cell "${cell.id}", the plan has "${ids[position] ?? 'nothing'}" at position ${position}`,
          );
        if (cell.status === 'error') errored.push(cell.id);
        else cells.set(position, cell);
      } catch (error) {
        this.onWarning(`${file}: ${errorMessage(error)}: the cell runs again`);
      }
    }
    if (errored.length > 0)
      this.onWarning(
        `--resume ${this.dir}: ${errored.length} cell${errored.length === 1 ? '' : 's'} in error run again: ${errored.join(', ')}`,
      );
    return cells;
  }
}
