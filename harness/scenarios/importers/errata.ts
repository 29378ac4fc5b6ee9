/**
 * Errata (docs/judging.md): a JSON file of gold answers known to be wrong, applied at import. Each
 * entry names a question as the import summary does (LoCoMo `SAMPLE_ID qa[INDEX]`, LongMemEval
 * its `question_id`) and gives either the corrected answer or `drop: true` with a reason:
 *
 *   { "source": "where the list comes from",
 *     "errata": { "conv-26 qa[12]": { "answer": "7 May 2023", "reason": "..." },
 *                 "conv-30 qa[4]": { "drop": true, "reason": "the answer is not in the conversation" } } }
 *
 * A corrected answer replaces the question's gold; a dropped question is left out of the run.
 * Both are counted per category label, so reports can print the ceiling the list implies: the
 * share of questions whose original gold is right.
 */
import { z } from 'zod';
import { MembenchError } from '../../core/errors.js';
import { describeIssue, formatPath, formatProblem, parseMappingText, readBoundedText, type Problem } from '../load.js';
import { closestString } from '../../core/user-input.js';
import type { ErrataCounts, ErrataReport, ImportLog, UnusedErratum } from './shared.js';

const entrySchema = z.union(
  [
    z.strictObject({
      answer: z
        .string({ error: 'expected the corrected answer as a string' })
        .min(1, 'expected the corrected answer, got an empty string'),
      reason: z.string().optional(),
    }),
    z.strictObject({
      drop: z.literal(true, { error: 'expected true' }),
      reason: z
        .string({ error: 'a dropped question needs a reason (a string)' })
        .min(1, 'a dropped question needs a reason'),
    }),
  ],
  { error: 'expected {"answer": "...", "reason": "..."} or {"drop": true, "reason": "..."}' },
);
const errataSchema = z.strictObject({
  source: z.string().optional(),
  errata: z.record(z.string(), entrySchema, { error: 'expected a mapping of question ids to errata' }),
});

export type Erratum = z.infer<typeof entrySchema>;

const ERRATA_DOCUMENT = {
  noun: 'errata file',
  holds: '`errata`: question id → {"answer": ...} or {"drop": true, "reason": ...}',
};

/**
 * An errata file larger than this is refused: a whole dataset's questions (LoCoMo's ~2 000,
 * LongMemEval's 500) with a corrected answer and a reason each fit in well under 1 MiB.
 */
export const MAX_ERRATA_BYTES = 4 * 1024 * 1024;

/** Id comparisons spent looking for the nearest imported id of unused errata (a few seconds at most). */
const CLOSEST_SEARCH_PAIRS = 2_000_000;

/** An errata file, read and checked, applied to the probes of one import at a time. */
export class Errata {
  private readonly used = new Set<string>();
  /** Every question id the imports offered, so an erratum naming none can be shown the nearest. */
  private readonly offered = new Set<string>();
  private readonly counts = new Map<string, ErrataCounts>();

  constructor(
    readonly file: string,
    private readonly entries: ReadonlyMap<string, Erratum>,
  ) {}

  /** Checks errata text (JSON, or YAML of the same shape); problems located as `file:line:col: path: message`. */
  static parse(text: string, file: string): Errata {
    const parsed = parseMappingText(text, file, ERRATA_DOCUMENT);
    const problems: Problem[] = [...parsed.problems];
    let entries = new Map<string, Erratum>();
    if (parsed.value) {
      const checked = errataSchema.safeParse(parsed.value, { reportInput: true });
      if (checked.success) entries = new Map(Object.entries(checked.data.errata));
      else {
        for (const issue of checked.error.issues) {
          const segments = issue.path as (string | number)[];
          const keys = (issue as { keys?: string[] }).keys;
          const where = keys?.length ? parsed.locate.key([...segments, keys[0]!]) : parsed.locate.value(segments);
          problems.push({
            file,
            ...where,
            path: formatPath(keys?.length ? [...segments, keys[0]!] : segments),
            message: keys?.length ? `unknown field "${keys[0]}"` : describeIssue(issue),
            severity: 'error',
          });
        }
      }
    }
    const errors = problems.filter((problem) => problem.severity === 'error');
    if (errors.length > 0)
      throw new MembenchError('INVALID_ARGUMENT', `${file}: not a valid errata file`, errors.map(formatProblem));
    return new Errata(file, entries);
  }

  /** Reads an errata file (UTF-8, at most MAX_ERRATA_BYTES). */
  static async load(file: string): Promise<Errata> {
    return Errata.parse(await readBoundedText(file, MAX_ERRATA_BYTES, ERRATA_DOCUMENT), file);
  }

  /**
   * Applies the errata to a converted scenario's probes (`items[i]` names the question of the
   * i-th probe): corrected gold replaces `expect`, dropped probes are removed. Every change is
   * reported in the import log; the returned steps are the scenario's new steps.
   */
  apply(
    steps: readonly Record<string, unknown>[],
    items: readonly string[],
    log: ImportLog,
  ): Record<string, unknown>[] {
    let probeIndex = 0;
    const out: Record<string, unknown>[] = [];
    for (const step of steps) {
      if (!('probe' in step)) {
        out.push(step);
        continue;
      }
      const item = items[probeIndex++];
      if (item !== undefined) this.offered.add(item);
      const label =
        typeof step.label === 'string' ? step.label : typeof step.category === 'string' ? step.category : 'unlabelled';
      const count = this.counts.get(label) ?? { questions: 0, corrected: 0, dropped: 0 };
      this.counts.set(label, count);
      count.questions++;
      const erratum = item === undefined ? undefined : this.entries.get(item);
      if (item === undefined || erratum === undefined) {
        out.push(step);
        continue;
      }
      this.used.add(item);
      const why = erratum.reason ? ` (${erratum.reason})` : '';
      if ('drop' in erratum) {
        count.dropped++;
        log.skip(item, 'erratum-dropped', `dropped by ${this.file}${why}`, item);
        continue;
      }
      if (!Array.isArray(step.expect)) {
        // An unanswerable (abstention) question has no gold to correct: the erratum is reported, the question kept as it is.
        log.repair(
          item,
          'erratum-not-applicable',
          `${this.file} gives the answer "${erratum.answer}" to a question scored as unanswerable: kept as unanswerable (drop it instead)`,
          item,
        );
        out.push(step);
        continue;
      }
      count.corrected++;
      log.repair(
        item,
        'erratum-corrected',
        `gold ${JSON.stringify(step.expect.join(' / '))} corrected to ${JSON.stringify(erratum.answer)} by ${this.file}${why}`,
        item,
      );
      out.push({ ...step, expect: [erratum.answer] });
    }
    return out;
  }

  /**
   * Every erratum that named no imported question: one naming a question the import skipped with
   * the import's reason (`log`), any other with the imported question id nearest to it by edit
   * distance (a typo in a long list is then found at a glance). The search stops after
   * CLOSEST_SEARCH_PAIRS comparisons: ids past it are listed without a nearest one.
   */
  unusedIds(log: ImportLog): UnusedErratum[] {
    const offered = [...this.offered];
    let budget = CLOSEST_SEARCH_PAIRS;
    return [...this.entries.keys()]
      .filter((key) => !this.used.has(key))
      .map((id) => {
        const skip = log.skipOf(id);
        if (skip) return { id, skipped: skip.message };
        if (budget < offered.length) return { id };
        budget -= offered.length;
        const closest = closestString(id, offered);
        return closest === undefined ? { id } : { id, closest };
      });
  }

  /** The counts so far, and how many errata named no imported question. */
  report(): ErrataReport {
    return {
      file: this.file,
      byLabel: Object.fromEntries([...this.counts].sort(([a], [b]) => a.localeCompare(b))),
      unused: [...this.entries.keys()].filter((key) => !this.used.has(key)).length,
    };
  }
}
