import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../harness/results/schema.js';
import { type CliResult, membench } from './helpers.js';
import { membenchInProcess } from '../helpers/cli-in-process.js';
import { allOk } from '../helpers/cells.js';
import { builtModule } from '../helpers/built.js';
import { tempDir as newTempDir } from '../helpers/temp-dir.js';

const tempDir = () => newTempDir('membench-tune-');
/**
 * On recipes-en the window's recall by k is 0, 0.14, 0.29, 0.29: with a target of 0.25, k=1 and k=2
 * fall short, k=3 and k=4 meet it and k=3 is the cheaper; four cells show each side of the choice.
 */
const K = [1, 2, 3, 4];
const TARGET = '0.25';

describe('membench tune', () => {
  it('finds the smallest window k that meets a recall target on the recipes scenario, as a direct sweep shows', {
    timeout: 120_000,
  }, async () => {
    const [{ result: tuned, out }, direct] = await Promise.all([
      tuneWindowK(['--values', '1..4', '-c', 'recipes-en', '-q'], TARGET),
      // The built runner: the sources' module graph would be transformed for this one call.
      builtModule<typeof import('../../harness/run/runner.js')>('harness/run/runner.js').then(({ runBenchmark }) =>
        runBenchmark({ scenarios: ['recipes-en'], strategies: ['window'], params: [`window.k=${K.join(',')}`] }),
      ),
    ]);
    // Recall grows with k and so do the tokens: the cheapest setting that meets the target is the smallest such k.
    const cells = allOk(direct).cells;
    const expected = cells.find((cell) => cell.recall.contextRecall.value! >= Number(TARGET))!;
    expect(expected.options.k).toBeGreaterThan(1);
    // A larger k meets it too, at more tokens: the choice is the cheapest, not the only one.
    expect(cells.at(-1)!.recall.contextRecall.value!).toBeGreaterThanOrEqual(Number(TARGET));
    expect(cells.at(-1)!.tokens.contextTotal).toBeGreaterThan(expected.tokens.contextTotal);
    expect(tuned.code).toBe(0);
    expect(tuned.stdout).toContain(
      `cheapest setting meeting the target: window(k=${String(expected.options.k)}): recall ${expected.recall.contextRecall.value!.toFixed(2)} (${expected.recall.contextRecall.hits}/${expected.recall.contextRecall.n}) at ${expected.tokens.contextTotal} contextTotal tokens`,
    );
    expect(tuned.stdout).toMatch(
      new RegExp(`^\\s*${String(expected.options.k)}  .*<- cheapest meeting the target$`, 'mu'),
    );
    expect(tuned.stdout.match(/^\s*\d+  \d\.\d\d \(\d+\/\d+\)/gmu)).toHaveLength(K.length);
    expect(existsSync(path.join(out, 'charts', 'sweep-window-k.png'))).toBe(true);
    // The charts are said where they are, in charts/, as run says it.
    expect(tuned.stdout).toMatch(
      /^wrote .*\/ \(results\.json, report\.md, report\.html, junit\.xml and \d+ charts in charts\/\); the sweep chart: charts\/sweep-window-k\.png$/mu,
    );
    const results = JSON.parse(readFileSync(path.join(out, 'results.json'), 'utf8')) as RunResult;
    expect(results.cells.map((cell) => cell.options.k)).toEqual(K);
  });

  it('exits 1 and says so when no value meets the target', async () => {
    const { result: none } = await tuneWindowK(['--values', '1,2', '-c', 'recipes-en', '-q', '-w', '1'], '0.9');
    expect(none.code).toBe(1);
    expect(none.stdout).toMatch(/no value of k meets context recall >= 0\.9 \(best recall: 0\.14 at k=2\)/u);
  });

  it('refuses an empty --out as run does (it said "no such file or directory: ")', async () => {
    const result = await membenchInProcess(sweepK('window', ''));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--out is empty (an unset variable?)');
  });

  it('says why each failed cell failed, as run does (the table only counted them)', async () => {
    const out = path.join(await tempDir(), 'out');
    const result = await membenchInProcess(sweepK('./fixtures/strategies/fails-to-create.mjs', out, '-q'));
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^1 {2}.* 1 cell\(s\) failed$/mu);
    for (const k of [1, 2])
      expect(result.stderr).toMatch(
        new RegExp(`^FAILED recipes-en/fails-to-create\\(k=${k}\\): .*create says no`, 'mu'),
      );
  });

  // yargs reads "-1,2" as the short flags -1 -, -2: the CLI joins it to --values, so tune names the value.
  it.each([
    [['--values', '9..1'], 'membench: --values 9..1: 9 is above 1'],
    [['--values', '-1,2'], 'membench: --values -1,2: window.k=-1: k cannot be negative'],
    [['--values=-1,2'], 'membench: --values -1,2: window.k=-1: k cannot be negative'],
  ])('exits 2 on %j, naming the value, and writes nothing', async (values, message) => {
    // "-1,2" as the CLI process (main.ts joins it to --values); the others in this one.
    const { result, out } = await tuneWindowK(values, '0.9', values[1] === '-1,2' ? membench : membenchInProcess);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr).not.toContain('Unknown argument');
    expect(existsSync(out)).toBe(false);
  });

  // yargs said "Missing required arguments: param, values, target-recall", and never that --knob is no option.
  const NEEDS_PARAM =
    'tune needs --param (-p): the numeric knob to sweep, e.g. k (window) or maxTokenLimit (summary-buffer); --values: values to try: A..B, A..B..STEP or a list 1,2,4,8; --target-recall: pooled context recall a setting must reach (0..1)';
  it.each([
    [['tune', '-s', 'window'], `membench: ${NEEDS_PARAM}\n`],
    [
      ['tune', '-s', 'window', '--knob', 'k'],
      `membench: ${NEEDS_PARAM}\n(--knob: not an option of tune; membench tune --help lists its options)\n`,
    ],
    [
      ['tune', '-qs', 'window', '--values', '1..4', '--target-recall=0.9'],
      'membench: tune needs --param (-p): the numeric knob to sweep, e.g. k (window) or maxTokenLimit (summary-buffer)\n',
    ],
  ])('exits 2 on %j, saying what each missing option is for', async (args, message) => {
    const result = await membenchInProcess(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(message);
  });

  it('exits 2 on a second strategy or knob, naming the flag and its values, and writes nothing', async () => {
    const { result, out } = await tuneWindowK(['-s', 'buffer', '--values', '1,2'], '0.9', membenchInProcess);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'membench: --strategy given 2 times (window, buffer): it takes one value; give it once',
    );
    expect(result.stderr).not.toMatch(/internal error|\n\s+at /u);
    expect(existsSync(out)).toBe(false);
  });

  it('elsewhere leaves a value like -1,2 as unknown flags, and says how to pass it', async () => {
    const workers = await membench(['run', '-w', '-1,2', '-o', path.join(await tempDir(), 'workers')]);
    expect(workers.code).toBe(2);
    expect(workers.stderr).toContain('join it to its option with "="');
  });
});

/** The arrange step of every case: `membench tune -s window -p k VALUES... --target-recall TARGET -o OUT`, OUT a fresh dir. */
/** `tune` of a strategy's knob k over 1 and 2 on recipes-en, target 0.5, into `out`. */
const sweepK = (strategy: string, out: string, ...rest: string[]): string[] => [
  'tune',
  '-s',
  strategy,
  '-p',
  'k',
  '--values',
  '1,2',
  '--target-recall',
  '0.5',
  '-c',
  'recipes-en',
  '-o',
  out,
  ...rest,
];

async function tuneWindowK(
  values: string[],
  target: string,
  cli: (args: string[]) => Promise<CliResult> = membench,
): Promise<{ result: CliResult; out: string }> {
  const out = path.join(await tempDir(), 'tune');
  const result = await cli(['tune', '-s', 'window', '-p', 'k', ...values, '--target-recall', target, '-o', out]);
  return { result, out };
}
