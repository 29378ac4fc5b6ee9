/**
 * Figures no run can produce (99 hits of 1, a recall of 2, -5 tokens) are refused where a results
 * file is read: exit 2, naming the file and the field, never shown by compare, report or explain.
 * What membench writes still reads back, and the writer keeps results the schema refuses.
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { CommandModule } from 'yargs';
import yargs from 'yargs';
import * as compareCommand from '../../../harness/cli/compare.js';
import * as explainCommand from '../../../harness/cli/explain.js';
import * as reportCommand from '../../../harness/cli/report.js';
import { isMembenchError } from '../../../harness/core/errors.js';
import { distribution } from '../../../harness/core/metrics.js';
import { longMemEvalFigures } from '../../../harness/results/protocols.js';
import { parseResults } from '../../../harness/results/read.js';
import { summarizeRetrieval } from '../../../harness/results/retrieval.js';
import { RESULTS_SCHEMA_VERSION, type RunResult } from '../../../harness/results/schema.js';
import { renderJson } from '../../../reports/json.js';
import { ROOT } from '../../cli/helpers.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { smallRun } from '../../reports/fixture.js';

const V3 = path.join(ROOT, 'fixtures/results/v3.json');
const BASELINE = path.join(ROOT, 'baselines/offline.json');

/** Today's results file of a default-shaped run: the small fixture's cells written as this version writes them. */
function validText(): string {
  const run = smallRun();
  return renderJson({ ...run, header: { ...run.header, schemaVersion: RESULTS_SCHEMA_VERSION } });
}

/** The valid file as data, changed by `edit` (cell 0 is recipes-zh/buffer: 7 answerable probes, every one recalled). */
function edited(edit: (data: Record<string, any>) => void): string {
  const data = JSON.parse(validText());
  edit(data);
  return JSON.stringify(data);
}

/** The lines parseResults refuses `text` with (it must refuse it as bad input: exit 2). */
function refusal(text: string, source = 'bad/results.json'): { message: string; details: readonly string[] } {
  try {
    parseResults(text, source);
  } catch (error) {
    if (!isMembenchError(error)) throw error;
    expect(error.exitCode).toBe(2);
    return { message: error.message, details: error.details };
  }
  throw new Error('parseResults took a file with an impossible figure');
}

describe('a results file with an impossible figure', () => {
  it.each<[string, (data: Record<string, any>) => void, string]>([
    [
      'more hits than probes',
      (data) => (data.cells[0].recall.contextRecall = { n: 1, hits: 99, value: 1 }),
      'cells[0] (id "recipes-zh/buffer").recall.contextRecall.hits: 99 hits of 1',
    ],
    [
      'hits of no probe',
      (data) => (data.cells[0].recall.staleExposure = { n: 0, hits: 2, value: null }),
      'cells[0] (id "recipes-zh/buffer").recall.staleExposure.hits: 2 hits of 0',
    ],
    [
      'a rate above 1',
      (data) => (data.cells[0].recall.contextRecall = { n: 2, hits: 2, value: 2 }),
      'cells[0] (id "recipes-zh/buffer").recall.contextRecall.value: expected a share from 0 to 1, got 2',
    ],
    [
      'a rate below 0',
      (data) => (data.cells[0].recall.answerAccuracy = { n: 2, hits: 0, value: -0.5 }),
      'cells[0] (id "recipes-zh/buffer").recall.answerAccuracy.value: expected a share from 0 to 1, got -0.5',
    ],
    [
      'a rate that is not hits / n',
      (data) => (data.cells[0].recall.contextRecall = { n: 2, hits: 1, value: 1 }),
      'cells[0] (id "recipes-zh/buffer").recall.contextRecall.value: expected hits / n = 1/2, got 1',
    ],
    [
      'a rate of no probe',
      (data) => (data.cells[0].recall.abstention = { n: 0, hits: 0, value: 0 }),
      'cells[0] (id "recipes-zh/buffer").recall.abstention.value: expected null (n is 0), got 0',
    ],
    [
      'no rate over probes',
      (data) => (data.cells[0].recall.contextRecall = { n: 3, hits: 0, value: null }),
      'cells[0] (id "recipes-zh/buffer").recall.contextRecall.value: expected hits / n = 0/3, got null',
    ],
    [
      'a fractional count',
      (data) => (data.cells[0].recall.contextRecall = { n: 2.5, hits: 1, value: 0.4 }),
      'cells[0] (id "recipes-zh/buffer").recall.contextRecall.n: expected a whole number, 0 or more, got 2.5',
    ],
    [
      'a mean share above 1',
      (data) => (data.cells[0].recall.answerRecall = { n: 7, mean: 1.2 }),
      'cells[0] (id "recipes-zh/buffer").recall.answerRecall.mean: expected a share from 0 to 1, got 1.2',
    ],
    [
      'a mean of no probe',
      (data) => (data.cells[0].recall.evidenceRecall = { n: 0, mean: 0.5 }),
      'cells[0] (id "recipes-zh/buffer").recall.evidenceRecall.mean: expected null (n is 0), got 0.5',
    ],
    [
      'no mean over probes',
      (data) => (data.cells[0].recall.answerRecall = { n: 7, mean: null }),
      'cells[0] (id "recipes-zh/buffer").recall.answerRecall.mean: expected the mean of 7 shares, got null',
    ],
    [
      'a category rate above 1',
      (data) => (data.cells[0].recallByCategory.extraction.contextRecall.value = 3),
      'cells[0] (id "recipes-zh/buffer").recallByCategory.extraction.contextRecall.value: expected a share from 0 to 1, got 3',
    ],
    [
      'negative context tokens',
      (data) => (data.cells[0].tokens.contextTotal = -5),
      'cells[0] (id "recipes-zh/buffer").tokens.contextTotal: expected a whole number, 0 or more, got -5',
    ],
    [
      'fractional answer tokens',
      (data) => (data.cells[0].tokens.answer = 10.5),
      'cells[0] (id "recipes-zh/buffer").tokens.answer: expected a whole number, 0 or more, got 10.5',
    ],
    [
      'a negative mean of context tokens',
      (data) => (data.cells[0].tokens.contextMeanPerTurn = -1),
      'cells[0] (id "recipes-zh/buffer").tokens.contextMeanPerTurn: expected 0 or more, got -1',
    ],
    [
      'negative usage tokens',
      (data) => (data.cells[0].usage.answerTokens = -3),
      'cells[0] (id "recipes-zh/buffer").usage.answerTokens: expected a whole number, 0 or more, got -3',
    ],
    [
      "a turn's negative context tokens",
      (data) => (data.cells[0].turns[1].contextTokens = -7),
      'cells[0] (id "recipes-zh/buffer").turns.1.contextTokens: expected a whole number, 0 or more, got -7',
    ],
    [
      "a probe's negative context tokens",
      (data) => (data.cells[0].probes[0].contextTokens = -1),
      'cells[0] (id "recipes-zh/buffer").probes.0.contextTokens: expected a whole number, 0 or more, got -1',
    ],
    [
      'a negative latency',
      (data) => (data.cells[0].latency.saveMs.p95 = -0.5),
      'cells[0] (id "recipes-zh/buffer").latency.saveMs.p95: expected a time of 0 ms or more, got -0.5',
    ],
    [
      "a turn's negative save time",
      (data) => (data.cells[0].turns[0].saveMs = -2),
      'cells[0] (id "recipes-zh/buffer").turns.0.saveMs: expected a time of 0 ms or more, got -2',
    ],
    [
      "a probe's evidence recall above 1",
      (data) => (data.cells[0].probes[0].evidenceRecall = 1.5),
      'cells[0] (id "recipes-zh/buffer").probes.0.evidenceRecall: expected a share from 0 to 1, got 1.5',
    ],
    [
      'an NDCG above 1',
      (data) => (data.cells[0].retrieval = { turn: { n: 1, atK: [{ k: 1, recallAny: 1, recallAll: 1, ndcg: 1.5 }] } }),
      'cells[0] (id "recipes-zh/buffer").retrieval.turn.atK.0.ndcg: expected a share from 0 to 1, got 1.5',
    ],
    [
      'a negative peak memory',
      (data) => (data.cells[0].peakRssMb = -1),
      'cells[0] (id "recipes-zh/buffer").peakRssMb: expected 0 or more, got -1',
    ],
    [
      "a run's negative duration",
      (data) => (data.header.durationMs = -10),
      'header.durationMs: expected a time of 0 ms or more, got -10',
    ],
    [
      'a mean of context tokens above their max',
      (data) => (data.cells[0].tokens.contextMeanPerTurn = 2000),
      'cells[0] (id "recipes-zh/buffer").tokens.contextMeanPerTurn: expected at most contextMax (1688), got 2000',
    ],
    [
      "a turn's context above the sum over turns",
      (data) => (data.cells[0].tokens.contextTotal = 1),
      'cells[0] (id "recipes-zh/buffer").tokens.contextMax: expected at most contextTotal (1), got 1688',
    ],
    [
      'a latency of no value with figures',
      (data) => (data.cells[0].latency.modelMs = { n: 0, mean: 3, p50: 0, p95: 0, p99: 0, max: 0 }),
      'cells[0] (id "recipes-zh/buffer").latency.modelMs.mean: expected 0 (n is 0), got 3',
    ],
    [
      'a mean latency above its max',
      (data) => (data.cells[0].latency.saveMs = { n: 2, mean: 9, p50: 3, p95: 4, p99: 5, max: 6 }),
      'cells[0] (id "recipes-zh/buffer").latency.saveMs.mean: expected at most max (6), got 9',
    ],
    [
      'a median latency above its p95',
      (data) => (data.cells[0].latency.loadMs = { n: 2, mean: 1, p50: 5, p95: 4, p99: 5, max: 6 }),
      'cells[0] (id "recipes-zh/buffer").latency.loadMs.p50: expected at most p95 (4), got 5',
    ],
    [
      'a p99 latency above its max',
      (data) => (data.cells[0].latency.modelMs = { n: 3, mean: 1, p50: 1, p95: 2, p99: 7, max: 3 }),
      'cells[0] (id "recipes-zh/buffer").latency.modelMs.p99: expected at most max (3), got 7',
    ],
    [
      "an id that is not its fields' (its setting is window(k=2))",
      (data) => (data.cells[1].id = 'recipes-zh/buffer'),
      'cells[1].id: expected "recipes-zh/window(k=2)" or "recipes-zh/window(k=2)/no-keys" (from its scenario "recipes-zh", setting "window(k=2)" and trial 0, in a run of 1 trial), got "recipes-zh/buffer"',
    ],
    [
      'an id without its trial in a run of several',
      (data) => (data.header.trials = 2),
      'cells[0].id: expected "recipes-zh/buffer/t0" or "recipes-zh/buffer/no-keys/t0" (from its scenario "recipes-zh", setting "buffer" and trial 0, in a run of 2 trials), got "recipes-zh/buffer"',
    ],
    [
      'a trial the run does not have',
      (data) => (data.cells[0].trial = 3),
      'cells[0] (id "recipes-zh/buffer").trial: expected trial 0 (the run has 1 trial), got 3',
    ],
    [
      'a setting of another strategy',
      (data) => (data.cells[0].strategy = 'window'),
      'cells[0] (id "recipes-zh/buffer").setting: expected a setting of its strategy "window" ("window" or "window(…)"), got "buffer"',
    ],
  ])('is refused: %s, naming the file and the field', (_, edit, line) => {
    const { message, details } = refusal(edited(edit));
    expect(message).toBe(
      `bad/results.json: not a valid membench results file (schema version ${RESULTS_SCHEMA_VERSION})`,
    );
    expect(details).toContain(`  ${line}`);
  });

  it('says a long value from the file cut, not whole (a 10,000-character id made a line of 70,000)', () => {
    const long = `recipes-zh/${'x'.repeat(10_000)}`;
    const { details } = refusal(edited((data) => (data.cells[1].id = long)));
    expect(details).toHaveLength(1);
    expect(details[0]!.length).toBeLessThan(600);
    expect(details[0]).toMatch(
      /^ {2}cells\[1\]\.id: expected "recipes-zh\/window\(k=2\)" or .*, got "recipes-zh\/x+…"$/u,
    );
  });

  it('is refused when its id leaves out that it ran without idempotency keys (its durability outcome says so)', () => {
    const data = JSON.parse(readFileSync(BASELINE, 'utf8'));
    const index = data.cells.findIndex((cell: { id: string }) => cell.id === 'crash-mid-tool-call/buffer/no-keys');
    expect(data.cells[index].durabilityOutcome.idempotencyKeys).toBe(false);
    data.cells[index].id = 'crash-mid-tool-call/buffer';
    expect(refusal(JSON.stringify(data), BASELINE).details).toEqual([
      `  cells[${index}].id: expected "crash-mid-tool-call/buffer/no-keys" (from its scenario "crash-mid-tool-call", setting "buffer" and trial 0, in a run of 1 trial), got "crash-mid-tool-call/buffer"`,
    ]);
  });

  it('is refused in an older version too (version 3, read under version 4 names)', () => {
    const data = JSON.parse(readFileSync(V3, 'utf8'));
    data.cells[0].recall.contextRecall.hits = data.cells[0].recall.contextRecall.n + 1;
    const { message, details } = refusal(JSON.stringify(data), V3);
    expect(message).toBe(`${V3}: not a valid membench results file (schema version 3)`);
    const { n } = data.cells[0].recall.contextRecall;
    expect(details).toEqual([`  cells[0] (id "${data.cells[0].id}").recall.contextRecall.hits: ${n + 1} hits of ${n}`]);
  });
});

describe('a results file membench writes', () => {
  it("reads back: a default-shaped run in today's version, the committed baseline and the version 3 fixture", () => {
    const text = validText();
    expect(JSON.parse(text).header.schemaVersion).toBe(RESULTS_SCHEMA_VERSION);
    expect(parseResults(text, 'results.json').cells).toHaveLength(smallRun().cells.length);
    expect(parseResults(readFileSync(BASELINE, 'utf8'), BASELINE).cells.length).toBeGreaterThan(0);
    expect(parseResults(readFileSync(V3, 'utf8'), V3).cells.length).toBeGreaterThan(0);
  });

  it('reads back with a mean equal to its max, or a rounding above it (a sum / n of equal times)', () => {
    const times = distribution([0.1, 0.1, 0.1]);
    expect(times.mean).toBeGreaterThan(times.max);
    const text = edited((data) => {
      data.cells[0].latency.saveMs = times;
      data.cells[0].tokens.contextMeanPerTurn = data.cells[0].tokens.contextMax;
    });
    const cell = parseResults(text, 'results.json').cells[0]!;
    expect(cell.status === 'ok' && cell.latency.saveMs).toEqual(times);
  });

  it('reads back with LongMemEval protocol figures of items that share a user turn (each turn ranked once: NDCG at most 1)', () => {
    // Entity summaries cite the same exchanges: protocols.ts maps each ranked item to its first user turn.
    const ranking = [['s1.t0', 's1.t1'], ['s1.t0', 's1.t1'], ['s1.t0'], ['s2.t0']];
    const corpus = {
      userTurns: new Set(['s1.t0', 's2.t0']),
      sessionOf: new Map([
        ['s1.t0', 1],
        ['s1.t1', 1],
        ['s2.t0', 2],
      ]),
    };
    const figures = longMemEvalFigures(ranking, ['s1.t0'], corpus, [1, 3, 5]);
    for (const atK of [...figures.turn, ...(figures.session ?? [])]) expect(atK.ndcg).toBeLessThanOrEqual(1);
    const text = edited((data) => {
      data.cells[0].probes[0].protocolRetrieval = figures;
      data.cells[0].protocolRetrieval = {
        protocol: 'longmemeval',
        summary: summarizeRetrieval([{ retrieval: figures }]),
      };
    });
    const cell = parseResults(text, 'results.json').cells[0]!;
    expect(cell.status === 'ok' && cell.probes[0]!.protocolRetrieval).toEqual(figures);
  });

  it('keeps a cell the schema refuses as it is: written with its figures, refused with the field when read', () => {
    const run: RunResult = JSON.parse(
      edited((data) => (data.cells[0].recall.contextRecall = { n: 1, hits: 99, value: 1 })),
    );
    const written = renderJson(run);
    const data = JSON.parse(written);
    expect(data.cells[0].recall.contextRecall).toEqual({ n: 1, hits: 99, value: 1 });
    expect(data.cells.slice(1)).toEqual(JSON.parse(validText()).cells.slice(1));
    expect(refusal(written).details).toEqual([
      '  cells[0] (id "recipes-zh/buffer").recall.contextRecall.hits: 99 hits of 1',
    ]);
  });

  it('keeps a header the schema refuses as it is', () => {
    const run: RunResult = JSON.parse(edited((data) => (data.header.durationMs = -10)));
    const written = renderJson(run);
    expect(JSON.parse(written).header.durationMs).toBe(-10);
    expect(JSON.parse(written).cells).toEqual(JSON.parse(validText()).cells);
    expect(refusal(written).details).toEqual(['  header.durationMs: expected a time of 0 ms or more, got -10']);
  });
});

/** `membench ARGS` of the command's source module, in this process: exit code and output. */
async function membenchSource(
  command: object,
  args: readonly string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((stdout += String(chunk)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((stderr += String(chunk)), true));
  const before = process.exitCode;
  process.exitCode = undefined;
  try {
    await yargs([...args])
      .scriptName('membench')
      .command(command as CommandModule)
      .strict()
      .exitProcess(false)
      .parseAsync();
    return { code: Number(process.exitCode ?? 0), stdout, stderr };
  } finally {
    process.exitCode = before;
    vi.restoreAllMocks();
  }
}

/** A valid base file, and a head file: the valid one changed by `edit`, in a fresh dir. */
async function baseAndHead(
  edit: (data: Record<string, any>) => void,
): Promise<{ dir: string; base: string; head: string }> {
  const dir = await tempDir('membench-impossible-');
  const base = path.join(dir, 'base.json');
  const head = path.join(dir, 'head.json');
  await writeFile(base, validText());
  await writeFile(head, edited(edit));
  return { dir, base, head };
}

describe('compare, report and explain', () => {
  it('exit 2 on a file with 99 hits of 1, naming the file and the field, and show none of its figures', async () => {
    const { dir, base, head } = await baseAndHead(
      (data) => (data.cells[0].recall.contextRecall = { n: 1, hits: 99, value: 50 }),
    );
    const expected = `membench: ${head}: not a valid membench results file (schema version ${RESULTS_SCHEMA_VERSION})\n`;
    const runs = [
      await membenchSource(compareCommand, ['compare', base, head]),
      await membenchSource(reportCommand, ['report', head, '--out', path.join(dir, 'report')]),
      await membenchSource(explainCommand, ['explain', head]),
    ];
    for (const run of runs) {
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr.startsWith(expected)).toBe(true);
      expect(run.stderr).toContain('  cells[0] (id "recipes-zh/buffer").recall.contextRecall.hits: 99 hits of 1\n');
    }
  });

  it("exit 2 on a cell whose id is not its fields': compare would match it with another run's cell of that id", async () => {
    // The window(k=2) cell under buffer's id, buffer's cell dropped: compare matched it with the base's buffer cell.
    const { base, head } = await baseAndHead((data) => {
      data.cells[1].id = 'recipes-zh/buffer';
      data.cells.splice(0, 1);
    });
    const run = await membenchSource(compareCommand, ['compare', base, head]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`membench: ${head}: not a valid membench results file`);
    expect(run.stderr).toContain('  cells[0].id: expected "recipes-zh/window(k=2)" or ');
    expect(run.stderr).toContain(', got "recipes-zh/buffer"\n');
  });

  it('compare a valid file with itself: no regression', async () => {
    const file = path.join(await tempDir('membench-impossible-'), 'results.json');
    await writeFile(file, validText());
    const run = await membenchSource(compareCommand, ['compare', file, file]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
  });
});
