import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { MANIFEST_FILE } from '../../harness/core/manifest.js';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import yargs from 'yargs';
import { RESULTS_SCHEMA_VERSION } from '../../harness/results/schema.js';
import { withoutTiming } from '../helpers/same-seed.js';
import { type CliResult, membench } from './helpers.js';
import type { OkRun } from '../helpers/cells.js';
import { builtModule } from '../helpers/built.js';
import { membenchInProcess } from '../helpers/cli-in-process.js';
import { commandHelp } from '../helpers/cli-help.js';
import { tempDir as newTempDir } from '../helpers/temp-dir.js';

const tempDir = () => newTempDir('membench-cli-');

/**
 * The first test's run (`run -c recipes-en -s buffer -s window`), made on first use: the tests of what
 * a second run does to an earlier one (--overwrite) start from a copy of its dir instead of running one.
 */
let firstRunDone: Promise<{ result: CliResult; out: string }> | undefined;
const firstRun = (): Promise<{ result: CliResult; out: string }> =>
  (firstRunDone ??= (async () => {
    const out = path.join(await tempDir(), 'run');
    const result = await membench([
      'run',
      '--scenario',
      'recipes-en',
      '--strategy',
      'buffer',
      '--strategy',
      'window',
      '--out',
      out,
    ]);
    return { result, out };
  })());
const earlierRun = async (): Promise<string> => {
  const { result, out } = await firstRun();
  expect(result.code, result.stderr).toBe(0);
  return out;
};

/** A refusal as the user sees it: exit 2, the message, no stack trace, and `out` never written. */
function expectRefused(result: { code: number; stderr: string }, message: string, out: string): void {
  expect(result.code).toBe(2);
  expect(result.stderr).toContain(message);
  expect(result.stderr).not.toMatch(/\n\s+at /u);
  expect(existsSync(out)).toBe(false);
}

describe('membench run', () => {
  it('runs, prints the summary table and writes results.json and report.md', async () => {
    const { result, out } = await firstRun();
    expect(result.stderr).not.toMatch(/at .*\.js:\d+/u);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/recipes-en .*buffer/su);
    expect(result.stdout).toContain('window(k=2)');
    expect(result.stdout).toContain('offline reference model');
    // Not a TTY: every line of the first screen, the closing "wrote" line included, fits 120 columns.
    // (the out dir's path is the user's: the "wrote" line is measured with it shortened to DIR).
    expect(
      result.stdout
        .split('\n')
        .map((line) => line.replace(/^wrote \S+/u, 'wrote DIR/'))
        .filter((line) => [...line].length > 120),
    ).toEqual([]);
    expect(result.stdout).toMatch(
      /^wrote .*\(results\.json, report\.md, report\.html, junit\.xml and \d+ charts in charts\/\)$/mu,
    );
    expect(result.stderr).toMatch(/^\[[12]\/2\] recipes-en\/window\(k=2\)/mu);
    expect(result.stderr).toMatch(/^\[2\/2\] /mu); // cells done, whichever finished last
    const results = JSON.parse(readFileSync(path.join(out, 'results.json'), 'utf8')) as OkRun;
    expect(results.header.schemaVersion).toBe(RESULTS_SCHEMA_VERSION);
    expect(results.header.nodeVersion).toBe(process.version);
    expect(results.cells).toHaveLength(2);
    expect(results.cells[0]!.phases).toBeUndefined(); // only with --profile
    expect(readFileSync(path.join(out, 'report.md'), 'utf8')).toContain('## Recall by probe category');
    expect(readdirSync(out)).toEqual(expect.arrayContaining(['report.md', 'results.json']));
  });

  it('writes the same results.json from the same seed, apart from timing fields, with filler and crashes', {
    timeout: 120_000,
  }, async () => {
    const dir = await tempDir();
    const scenario = path.join(dir, 'seeded.yaml');
    writeFileSync(
      scenario,
      'name: seeded\nsteps:\n  - user: My locker code is 5521.\n    assistant: Noted.\n  - filler: 12\n  - crash: after_ack\n  - remember: The spare key is under the blue pot.\n  - filler: 6\n  - crash: before_model_call\n  - user: What should I cook tonight?\n  - probe: What is my locker code?\n    expect: ["5521"]\n  - probe: Where is the spare key?\n    expect: ["blue pot"]\n',
    );
    const run = (seed: string, out: string) =>
      membench(['run', '-c', scenario, '-s', 'summary', '--seed', seed, '-o', path.join(dir, out), '-q']);
    const runs = await Promise.all([run('9', 'a'), run('9', 'b')]);
    expect(runs.map((item) => item.code)).toEqual([0, 0]);
    const [a, b] = ['a', 'b'].map(
      (out) => JSON.parse(readFileSync(path.join(dir, out, 'results.json'), 'utf8')) as OkRun,
    );
    // The run really had filler and crashes: the crashes were reached and the filler turns are recorded.
    // summary is the one cell: its summaries are model calls too, so more of what the seed fixes is recorded than buffer's.
    expect(a!.cells).toHaveLength(1);
    for (const cell of a!.cells) {
      expect(cell.durabilityOutcome!.crashes.map((crash) => [crash.point, crash.reached])).toEqual([
        ['after_ack', true],
        ['before_model_call', true],
      ]);
      expect(cell.turns.filter((turn) => turn.kind === 'user').length).toBeGreaterThan(18);
    }
    expect(withoutTiming(b)).toEqual(withoutTiming(a));
  });

  it("--profile prints where the time went, by phase, and records each cell's phases", async () => {
    const out = path.join(await tempDir(), 'run');
    const result = await membench(['run', '-c', 'stale-background-job', '-s', 'summary', '-o', out, '-q', '--profile']);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('## Profile: 1 cells');
    for (const phase of [
      'agent process start',
      'module loading',
      'strategy open',
      'replay (steps)',
      'crash recovery',
      'invariant checks',
      'rendering reports',
      'rendering charts',
    ])
      expect(result.stderr).toContain(phase);
    const results = JSON.parse(readFileSync(path.join(out, 'results.json'), 'utf8')) as OkRun;
    const [cell] = results.cells;
    // One crash (mid_summary): the first process and the one that recovered.
    expect(cell!.durabilityOutcome!.crashes.filter((crash) => crash.reached)).toHaveLength(1);
    expect(cell!.phases!.processes).toBe(2);
    expect(result.stderr).toContain('2 processes for 1 cells');
  });

  it('warns when --tokenizer names no model it knows, and says which encoding counts', async () => {
    // The warning is the plan's, made before any cell runs: the flags parsed by run's builder, resolved
    // and planned as its handler does, no cell run. That warnings reach stderr is the --overwrite test's.
    const run = await builtModule<typeof import('../../harness/cli/run.js')>('harness/cli/run.js');
    const { flagValues } = await builtModule<typeof import('../../harness/run/setting-sources.js')>(
      'harness/run/setting-sources.js',
    );
    const { resolveSettings } =
      await builtModule<typeof import('../../harness/run/layers.js')>('harness/run/layers.js');
    const { planRun } = await builtModule<typeof import('../../harness/run/plan.js')>('harness/run/plan.js');
    const warnings = async (tokenizer: string): Promise<string[]> => {
      const argv = await (
        await run.builder(
          yargs(['-c', 'recipes-en', '-s', 'buffer', '--tokenizer', tokenizer]).strict().exitProcess(false),
        )
      ).parseAsync();
      const { options } = await resolveSettings(flagValues(argv, 'run'));
      const said: string[] = [];
      await planRun({ ...options, onWarning: (warning) => said.push(warning) });
      return said;
    };
    expect(await warnings('not-a-model')).toEqual([
      expect.stringContaining(
        'warning: --tokenizer not-a-model: not a model whose encoding membench knows: counting with cl100k_base',
      ),
    ]);
    expect(await warnings('gpt-4')).toEqual([]);
  });

  it('never overwrites an earlier run unless asked (the next test runs one with --overwrite)', async () => {
    const out = path.join(await tempDir(), 'run');
    cpSync(await earlierRun(), out, { recursive: true });
    const before = readFileSync(path.join(out, 'results.json'), 'utf8');
    const again = await membenchInProcess(['run', '-c', 'recipes-en', '-s', 'window', '-o', out, '-q']);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(
      /already holds a run \(results\.json, report\.md[^)]*\): choose another --out, or pass --overwrite/u,
    );
    expect(readFileSync(path.join(out, 'results.json'), 'utf8')).toBe(before);
  });

  it('--overwrite follows its manifest only inside --out: a symlinked folder or file pointing outside is skipped with a warning', async () => {
    const root = await tempDir();
    const out = path.join(root, 'out');
    const outside = path.join(root, 'outside');
    mkdirSync(outside);
    const args = ['run', '-c', 'recipes-en', '-s', 'window', '-o', out, '-q'];
    cpSync(await earlierRun(), out, { recursive: true });
    writeFileSync(path.join(outside, 'victim.txt'), 'keep me');
    symlinkSync(outside, path.join(out, 'charts', 'lnk'));
    symlinkSync(path.join(outside, 'victim.txt'), path.join(out, 'victim-link.txt'));
    const manifest = JSON.parse(readFileSync(path.join(out, MANIFEST_FILE), 'utf8')) as { files: string[] };
    manifest.files.push('charts/lnk/victim.txt', 'victim-link.txt', '../outside/victim.txt');
    writeFileSync(path.join(out, MANIFEST_FILE), JSON.stringify(manifest));
    const again = await membench([...args, '--overwrite']);
    expect(again.code, again.stderr).toBe(0);
    expect(readFileSync(path.join(outside, 'victim.txt'), 'utf8')).toBe('keep me');
    for (const name of ['charts/lnk/victim.txt', 'victim-link.txt', '../outside/victim.txt'])
      expect(again.stderr).toContain(`warning: --overwrite left "${name}" in ${out} alone: `);
    expect(existsSync(path.join(out, 'results.json'))).toBe(true);
  });

  it('writes to a fresh timestamped dir under .membench by default', async () => {
    const cwd = await tempDir();
    const result = await membench(['run', '-c', 'recipes-zh', '-s', 'window', '-q'], { cwd });
    expect(result.code).toBe(0);
    const runs = readdirSync(path.join(cwd, '.membench'));
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatch(/^run-\d{8}-\d{6}$/u);
    expect(existsSync(path.join(cwd, '.membench', runs[0]!, 'results.json'))).toBe(true);
  });

  it.each([
    [['run', '-p', 'window.k=zero', '-q'], 'membench: --param window.k=zero: '],
    [['run', '-s', 'nope', '-q'], 'membench: unknown strategy "nope"'],
    [['list'], 'membench: list needs <what> (strategies or scenarios): membench list <what>'],
    [
      ['run', '--durability', 'sync,later', '-q'],
      'membench: --durability sync,later: "later" is not one of sync, async, exit, none',
    ],
    [['run', '-c', 'recipes-en', '--model', 'gpt-5', '-q'], 'membench: unknown model "gpt-5"'],
    [
      ['run', '-c', 'recipes-en', '--retrieval-k', '1,0', '-q'],
      'membench: --retrieval-k 1,0: expected whole numbers >= 1 separated by commas',
    ],
    [
      ['run', '-c', 'recipes-en', '--retrieval-k', '5,,10', '-q'],
      'membench: --retrieval-k 5,,10: expected whole numbers >= 1',
    ],
    [
      ['run', '-c', 'recipes-en', '-s', 'buffer', '--seed', 'abc', '-q'],
      'membench: --seed abc: expected a whole number from 0 to 4294967295',
    ],
    [
      ['run', '-c', 'recipes-en', '-s', 'buffer', '-q', '--seed'],
      'membench: --seed needs a value: expected a whole number from 0 to 4294967295',
    ],
    [
      ['run', '-c', 'recipes-en', '-s', 'buffer', '--price-durability', 'nosuch', '-q'],
      "membench: --price-durability nosuch: not among the run's scenarios (recipes-en): select it with -c",
    ],
    [
      ['run', '-c', 'recipes-en', '-s', 'buffer', '--price-durability', 'remember-then-crash', '-q'],
      "membench: --price-durability remember-then-crash: not among the run's scenarios (recipes-en)",
    ],
    [
      ['run', '-c', 'recipes-en', '-s', 'window', '-p', 'window.k=2,2', '-q'],
      'membench: --param window.k=2,2: window(k=2) is listed twice (a value repeated?): give each setting once',
    ],
    [
      ['run', '-c', 'recipes-en', '-s', 'window', '-p', 'window.k=2', '-p', 'window.k=2.0', '-q'],
      'membench: --param window.k=2 --param window.k=2.0: window(k=2) is listed twice',
    ],
    [
      ['run', '-c', 'recipes-en', '-s', 'buffer', '--stretch', '1e12', '-q'],
      'membench: --stretch 1e12: expected a whole number from 1 to 100000',
    ],
    // An unknown option with the one it is a typo or the start of; yargs' camel-case twin not repeated.
    [
      ['run', '-c', 'recipes-en', '--stratgy', 'window', '-q'],
      'membench: Unknown argument: stratgy (did you mean --strategy?)',
    ],
    [['run', '--scenarios', 'recipes-en', '-q'], 'membench: Unknown argument: scenarios (did you mean --scenario?)'],
    [
      ['compare', 'a', 'b', '--max-latency', '3'],
      'membench: Unknown argument: max-latency (did you mean --max-latency-ratio?)\n',
    ],
    [
      ['run', '-c', 'recipes-en', '-s', 'buffer', '--recall-threshold', '-1', '-q'],
      'membench: --recall-threshold -1: expected a share between 0 and 1',
    ],
    [
      ['validate', '--max-bytes', 'abc', 'scenarios/recipes-en.yaml'],
      'membench: --max-bytes abc: expected a whole number >= 1',
    ],
  ])('exits 2 with a clear message for %j', async (args, message) => {
    // The command's own module in this process; the CLI process's side (exit code, no stack trace) below.
    const out = path.join(await tempDir(), 'never-written');
    const result = await membenchInProcess([...args, ...(args[0] === 'run' ? ['-o', out] : [])]);
    expectRefused(result, message, out);
  });

  it.each([
    [['frobnicate'], 'membench: Unknown argument: frobnicate'],
    [
      ['import', 'longmemeval:fixtures/datasets/longmemeval-sample.json'],
      'membench: import needs <file>: membench import <dataset> <file>\n(import takes the dataset and the file apart: membench import longmemeval fixtures/datasets/longmemeval-sample.json; DATASET:FILE is the form of run --dataset)',
    ],
    [['compare', 'base/results.json'], 'membench: compare needs <head>: membench compare <base> <head>'],
    [['validate'], 'membench: validate needs <files..>: membench validate <files..>'],
    // The choices as the list command defines them (its --help shows them too).
    [['list'], 'membench: list needs <what> (strategies or scenarios): membench list <what>'],
    [
      ['tune', '--knob', 'k'],
      'membench: tune needs --strategy (-s): the strategy: a built-in name, langchain:NAME or a module path; --param (-p): the numeric knob to sweep, e.g. k (window) or maxTokenLimit (summary-buffer); --values: values to try: A..B, A..B..STEP or a list 1,2,4,8; --target-recall: pooled context recall a setting must reach (0..1)\n(--knob: not an option of tune; membench tune --help lists its options)',
    ],
    [
      ['run', '-c', 'recipes-en', '--overwrite', '5'],
      'membench: Unknown argument: 5\n(--overwrite is a switch and takes no value: "5" was left over; give the switch alone, or --overwrite=false)',
    ],
    [
      [],
      'membench: name a command: run, validate, list, compare, report, judge, merge, tune, explain, import, generate, bench or serve (membench --help says what each does)',
    ],
    [['run', '-c', 'missing.yaml', '-q'], 'missing.yaml:1:1: (document): cannot read: no such file'],
  ])('the CLI process exits 2 with a clear message for %j, no stack trace, nothing written', async (args, message) => {
    const out = path.join(await tempDir(), 'never-written');
    const result = await membench([...args, ...(args[0] === 'run' ? ['-o', out] : [])]);
    expectRefused(result, message, out);
  });
  it("sends a usage failure to the command's own --help, or to the list of commands when none was named", async () => {
    const named = await membench(['compare', 'base/results.json']);
    expect(named.stderr.trimEnd().split('\n').at(-1)).toBe('Run "membench compare --help" for usage.');
    const unnamed = await membench(['frobnicate']);
    expect(unnamed.stderr.trimEnd().split('\n').at(-1)).toBe('Run "membench --help" for usage.');
  });
});

describe('membench list and --help', () => {
  it('lists strategies from the registry and scenarios from scenarios/', async () => {
    const strategies = await membenchInProcess(['list', 'strategies']);
    expect(strategies.code).toBe(0);
    expect(strategies.stdout).toMatch(/^buffer /mu);
    expect(strategies.stdout).toContain('knobs: k=2, maxTokens');
    expect(strategies.stdout).toMatch(
      /^bm25 .*FTS5[^\n]*\n\s+knobs: k=4, recencyWeight=0, halfLife=20, recentExchanges=1, index=exchange, unit=turn, tokenizer=jieba/mu,
    );
    expect(strategies.stdout).toMatch(
      /^hybrid .*reciprocal rank fusion[^\n]*\n\s+knobs: .*fusionK=60, bm25Weight=1, vectorWeight=1/mu,
    );
    const scenarios = await membenchInProcess(['list', 'scenarios']);
    expect(scenarios.stdout).toMatch(/^recipes-zh +\d+ steps/mu);
  });

  it('documents every run option', () => {
    // --help as docs/cli.md holds it: test/docs/docs.test.ts holds that block to what the built CLI prints.
    const help = { stdout: commandHelp('run') };
    for (const option of [
      '--strategy',
      '--scenario',
      '--param',
      '--out',
      '--seed',
      '--overwrite',
      '--model',
      '--retrieval-k',
      'openai:NAME[:DIM]',
    ])
      expect(help.stdout).toContain(option);
  });
});
