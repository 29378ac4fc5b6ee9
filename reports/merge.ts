/**
 * `membench merge`: joins the shards of one run back into the run, cells in plan order. Shards
 * must agree on everything that decides results (seed, model, tokenizer, matrix, membench
 * version); a duplicate, overlapping or missing shard is refused (exit 2), never guessed around.
 */
import { assertRunResult } from '../harness/results/read.js';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { durabilityMatrix, modePrices } from '../harness/results/durability-matrix.js';
import { MembenchError } from '../harness/core/errors.js';
import { median } from '../harness/core/calibration.js';
import type { CellResult, JudgeRun, RunHeader, RunResult } from '../harness/results/schema.js';
import { shardSize, type ShardHeader } from '../harness/results/shard.js';

/** One input: its results and the file it came from (named in messages). */
export interface ShardInput {
  result: RunResult;
  file: string;
}

/** Header fields every shard must share, with how messages name them. */
const AGREED: [keyof RunHeader, string][] = [
  ['seed', 'seed'],
  ['trials', 'trials'],
  ['model', 'model'],
  ['embedder', 'embedder'],
  ['tokenizer', 'tokenizer'],
  ['strategies', 'strategies'],
  ['scenarios', 'scenarios'],
  ['membenchVersion', 'membench version'],
  ['gitCommit', 'membench commit'],
  ['protocol', 'protocol'],
  // Each shard imports the whole dataset file: another record is another file (or another version of it).
  ['imports', 'dataset imports'],
];

/** A run without a shard in its header covers the whole plan: shard 1 of 1. */
function shardOf({ result }: ShardInput): ShardHeader | undefined {
  return result.header.shard;
}

const show = (value: unknown): string => {
  if (value === undefined) return 'absent';
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
};

/**
 * Where two header values first differ: the path to it (`[0].options.k`, empty for the values
 * themselves) and the two values there. Two long lists of strategies cut at 80 characters looked
 * the same; the difference is inside.
 */
export function firstDifference(a: unknown, b: unknown, at = ''): { at: string; a: unknown; b: unknown } | undefined {
  if (isDeepStrictEqual(a, b)) return undefined;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let index = 0; index < Math.max(a.length, b.length); index++) {
      const found = firstDifference(a[index], b[index], `${at}[${index}]`);
      if (found) return found;
    }
  }
  const isObject = (value: unknown): value is Record<string, unknown> =>
    typeof value === 'object' && value !== null && !Array.isArray(value);
  if (isObject(a) && isObject(b)) {
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const found = firstDifference(a[key], b[key], `${at}.${key}`);
      if (found) return found;
    }
  }
  return { at, a, b };
}

/** Joins shards into one run: header of the first shard without `shard`, earliest start, longest duration; cells in plan order. */
export function mergeShards(inputs: readonly ShardInput[]): RunResult {
  if (!Array.isArray(inputs))
    throw new MembenchError('INVALID_ARGUMENT', 'mergeShards: expected a list of shards ({ result, file } each)');
  inputs.forEach((input, index) =>
    assertRunResult(
      input?.result,
      `mergeShards shard ${index + 1}${typeof input?.file === 'string' ? ` (${input.file})` : ''}`,
    ),
  );
  if (inputs.length === 0)
    throw new MembenchError('INVALID_ARGUMENT', 'merge: name the run dirs (or results files) of the shards');
  const [first] = inputs as [ShardInput, ...ShardInput[]];
  for (const input of inputs.slice(1)) {
    for (const [key, name] of AGREED) {
      const difference = firstDifference(input.result.header[key], first.result.header[key]);
      if (difference) {
        const where = difference.at === '' ? '' : ` at ${difference.at.replace(/^\./u, '')}`;
        throw new MembenchError(
          'INVALID_ARGUMENT',
          `merge: ${input.file} and ${first.file} differ in ${name}${where} (${show(difference.a)} vs ${show(difference.b)}): they are not shards of one run`,
        );
      }
    }
    // Whole rankings in some cells and the top 50 in others: the merged run's `retrieved` would be read as one kind.
    if (keptRankings(input.result) !== keptRankings(first.result))
      throw new MembenchError(
        'INVALID_ARGUMENT',
        `merge: ${input.file} and ${first.file} differ in --keep-rankings (${keptRankings(input.result)} vs ${keptRankings(first.result)}): run every shard with the same --keep-rankings`,
      );
    // A judge that ran on some shards only would label figures pooled over the judged cells as the whole run's.
    if (!isDeepStrictEqual(judgesOf(input.result), judgesOf(first.result)))
      throw new MembenchError(
        'INVALID_ARGUMENT',
        `merge: ${input.file} and ${first.file} differ in judges (${show(judgesOf(input.result))} vs ${show(judgesOf(first.result))}): judge every shard alike (membench judge DIR), or merge first and judge the merged run`,
      );
  }

  const files = new Set<string>();
  for (const { file } of inputs) {
    if (files.has(path.resolve(file))) throw new MembenchError('INVALID_ARGUMENT', `merge: ${file} is given twice`);
    files.add(path.resolve(file));
  }
  const shards = inputs.map((input) => ({ input, shard: shardOf(input) }));
  const whole = shards.filter(({ shard }) => !shard);
  if (whole.length > 0 && inputs.length > 1) {
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `merge: ${whole[0]!.input.file} is a whole run (no --shard), so it overlaps every other input: merge only the shards of one run`,
    );
  }
  if (whole.length === 1) return first.result;

  const reference = shards[0]!.shard!;
  const byIndex = new Map<number, ShardInput>();
  for (const { input, shard } of shards) {
    const header = shard!;
    if (
      header.count !== reference.count ||
      header.planned !== reference.planned ||
      header.digest !== reference.digest
    ) {
      throw new MembenchError(
        'INVALID_ARGUMENT',
        `merge: ${input.file} is shard ${header.index}/${header.count} of a ${header.planned}-cell plan (digest ${header.digest}), ${first.file} is shard ${reference.index}/${reference.count} of a ${reference.planned}-cell plan (digest ${reference.digest}): not the same split of one run`,
      );
    }
    const twin = byIndex.get(header.index);
    if (twin)
      throw new MembenchError(
        'INVALID_ARGUMENT',
        `merge: ${twin.file} and ${input.file} are both shard ${header.index}/${header.count}`,
      );
    const expected = shardSize(header.planned, header);
    if (input.result.cells.length !== expected) {
      throw new MembenchError(
        'INVALID_ARGUMENT',
        `merge: ${input.file} holds ${input.result.cells.length} cells, shard ${header.index}/${header.count} of ${header.planned} should hold ${expected}`,
      );
    }
    byIndex.set(header.index, input);
  }
  const ids = new Map<string, string>();
  for (const { input } of shards) {
    for (const cell of input.result.cells) {
      const other = ids.get(cell.id);
      if (other !== undefined)
        throw new MembenchError(
          'INVALID_ARGUMENT',
          `merge: cell ${cell.id} is in both ${other} and ${input.file}: a shard given twice, or overlapping shards`,
        );
      ids.set(cell.id, input.file);
    }
  }
  const missing = Array.from({ length: reference.count }, (_, index) => index + 1).filter(
    (index) => !byIndex.has(index),
  );
  if (missing.length > 0) {
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `merge: shard${missing.length > 1 ? 's' : ''} ${missing.map((index) => `${index}/${reference.count}`).join(', ')} missing: a merged run needs every shard`,
    );
  }

  // Plan position p ran in shard (p mod n) + 1, as its (p div n)-th cell.
  const cells: CellResult[] = Array.from(
    { length: reference.planned },
    (_, position) =>
      byIndex.get((position % reference.count) + 1)!.result.cells[Math.floor(position / reference.count)]!,
  );
  const headers = inputs.map((input) => input.result.header);
  const { shard: _shard, machine, calibration: _calibration, ...header } = first.result.header;
  // Shards timed on different machines (a CI matrix) have no one machine: compare then leaves latency out.
  const oneMachine = machine !== undefined && headers.every((item) => item.machine === machine);
  const calibration = oneMachine ? mergedCalibration(headers) : undefined;
  return {
    header: {
      ...header,
      ...(oneMachine ? { machine } : {}),
      ...(calibration ? { calibration } : {}),
      startedAt: headers.map((item) => item.startedAt).sort()[0]!,
      durationMs: Math.max(...headers.map((item) => item.durationMs)),
    },
    cells,
    durabilityMatrix: durabilityMatrix(cells),
    durabilityPrices: modePrices(cells),
    // Every shard imported the same datasets with the same errata; a judge's counts add up over the shards it judged.
    ...(first.result.errata ? { errata: first.result.errata } : {}),
    ...mergedJudges(inputs.map((input) => input.result)),
  };
}

/** The shards' calibrations of one machine pooled (the median of their medians), or none when a shard lacks one. */
function mergedCalibration(headers: readonly RunResult['header'][]): RunResult['header']['calibration'] {
  const each = headers.map((header) => header.calibration);
  if (each.some((item) => item === undefined)) return undefined;
  const all = each as NonNullable<RunResult['header']['calibration']>[];
  return {
    cpuMs: median(all.map((item) => item.cpuMs)),
    commitMs: median(all.map((item) => item.commitMs)),
    samples: all.reduce((sum, item) => sum + item.samples, 0),
  };
}

/** Which judges judged a run, and with which prompts: every shard of a merge must have the same. */
/** What a shard kept of each probe's ranking, as merge's refusal says it. */
const keptRankings = (result: RunResult): string =>
  result.header.keepRankings === true ? 'whole rankings kept' : 'the top of each ranking kept';

const judgesOf = (result: RunResult): string[] => (result.judges ?? []).map((run) => `${run.judge} (${run.prompts})`);

/** Judges over the shards: counts summed per judge, the latest judging time kept. */
function mergedJudges(results: readonly RunResult[]): Pick<RunResult, 'judges'> {
  const byJudge = new Map<string, JudgeRun>();
  for (const run of results.flatMap((result) => result.judges ?? [])) {
    const seen = byJudge.get(run.judge);
    byJudge.set(
      run.judge,
      seen
        ? {
            ...seen,
            judged: seen.judged + run.judged,
            unparsed: seen.unparsed + run.unparsed,
            requests: seen.requests + run.requests,
            cached: seen.cached + run.cached,
            tokens: seen.tokens + run.tokens,
            judgedAt: [seen.judgedAt, run.judgedAt].sort()[1]!,
          }
        : run,
    );
  }
  return byJudge.size > 0 ? { judges: [...byJudge.values()] } : {};
}
