import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../harness/results/schema.js';
import { runBenchmark } from '../../harness/run/runner.js';
import { membench } from './helpers.js';

const tempDir = () => mkdtemp(path.join(os.tmpdir(), 'membench-tune-'));
const K = Array.from({ length: 16 }, (_, index) => index + 1);

describe('membench tune', () => {
  it('finds the smallest window k that meets a recall target on the recipes scenario, as a direct sweep shows', {
    timeout: 120_000,
  }, async () => {
    const out = path.join(await tempDir(), 'tune');
    const [tuned, direct] = await Promise.all([
      membench([
        'tune',
        '-s',
        'window',
        '-p',
        'k',
        '--values',
        '1..16',
        '--target-recall',
        '0.5',
        '-c',
        'recipes-en',
        '-o',
        out,
        '-q',
      ]),
      runBenchmark({ scenarios: ['recipes-en'], strategies: ['window'], params: [`window.k=${K.join(',')}`] }),
    ]);
    // Recall grows with k and so do the tokens: the cheapest setting that meets 0.5 is the smallest such k.
    const expected = direct.cells.find((cell) => cell.recall.contextRecall.value! >= 0.5)!;
    expect(expected.options.k).toBeGreaterThan(1);
    expect(tuned.code).toBe(0);
    expect(tuned.stdout).toContain(
      `cheapest setting meeting the target: window(k=${String(expected.options.k)}): recall ${expected.recall.contextRecall.value!.toFixed(2)} (${expected.recall.contextRecall.hits}/${expected.recall.contextRecall.n}) at ${expected.tokens.contextTotal} contextTotal tokens`,
    );
    expect(tuned.stdout).toMatch(
      new RegExp(`^\\s*${String(expected.options.k)}  .*<- cheapest meeting the target$`, 'mu'),
    );
    expect(tuned.stdout.match(/^\s*\d+  \d\.\d\d \(\d+\/\d+\)/gmu)).toHaveLength(16);
    expect(existsSync(path.join(out, 'charts', 'sweep-window-k.png'))).toBe(true);
    const results = JSON.parse(readFileSync(path.join(out, 'results.json'), 'utf8')) as RunResult;
    expect(results.cells.map((cell) => cell.options.k)).toEqual(K);
  });

  it('exits 1 and says so when no value meets the target, 2 on bad input', async () => {
    const dir = await tempDir();
    const none = await membench([
      'tune',
      '-s',
      'window',
      '-p',
      'k',
      '--values',
      '1,2',
      '--target-recall',
      '0.9',
      '-c',
      'recipes-en',
      '-o',
      path.join(dir, 'none'),
      '-q',
      '-w',
      '1',
    ]);
    expect(none.code).toBe(1);
    expect(none.stdout).toMatch(/no value of k meets context recall >= 0\.9 \(best recall: 0\.14 at k=2\)/u);
    const bad = await membench([
      'tune',
      '-s',
      'window',
      '-p',
      'k',
      '--values',
      '9..1',
      '--target-recall',
      '0.9',
      '-o',
      path.join(dir, 'bad'),
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('membench: --values 9..1: 9 is above 1');
    expect(existsSync(path.join(dir, 'bad'))).toBe(false);
    // yargs reads "-1,2" as the short flags -1 -, -2: the CLI joins it to --values, so tune names the value.
    const negative = await membench([
      'tune',
      '-s',
      'window',
      '-p',
      'k',
      '--values',
      '-1,2',
      '--target-recall',
      '0.9',
      '-o',
      path.join(dir, 'negative'),
    ]);
    expect(negative.code).toBe(2);
    expect(negative.stderr).toContain('membench: --values -1,2: window.k=-1: k cannot be negative');
    expect(negative.stderr).not.toContain('Unknown argument');
    const joined = await membench([
      'tune',
      '-s',
      'window',
      '-p',
      'k',
      '--values=-1,2',
      '--target-recall',
      '0.9',
      '-o',
      path.join(dir, 'negative'),
    ]);
    expect(joined.stderr).toBe(negative.stderr);
    // Elsewhere a value like -1,2 stays unknown flags, and the message says how to pass it.
    const workers = await membench(['run', '-w', '-1,2', '-o', path.join(dir, 'workers')]);
    expect(workers.code).toBe(2);
    expect(workers.stderr).toContain('join it to its option with "="');
  });
});
