import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../harness/results/schema.js';
import { resolveSettings } from '../../harness/run/layers.js';
import { membench } from './helpers.js';
import { writeSmallScenario } from '../helpers/small-scenario.js';
import { tempDir } from '../helpers/temp-dir.js';

describe('membench run with a config file', () => {
  it('takes the matrix from membench.config.yaml in the working dir; flags override it', async () => {
    const cwd = await tempDir('membench-config-cli-');
    writeSmallScenario(cwd, 'pantry');
    await writeFile(
      path.join(cwd, 'membench.config.yaml'),
      'strategies: [buffer, window]\nscenarios: [pantry.yaml]\nparams:\n  window.k: [2, 4]\nseed: 7\nworkers: 1\nout: runs/ci\n',
    );
    const run = await membench(['run', '-s', 'window', '--seed', '8', '-q'], { cwd });
    expect(run.code).toBe(0);
    const results = JSON.parse(readFileSync(path.join(cwd, 'runs/ci/results.json'), 'utf8')) as RunResult;
    expect(results.header.seed).toBe(8);
    expect(results.cells.map((cell) => cell.id)).toEqual(['pantry/window(k=2)', 'pantry/window(k=4)']);
  });

  it('refuses an empty membench.config.yaml (exit 2) instead of running the default matrix', async () => {
    const cwd = await tempDir('membench-config-cli-');
    await writeFile(path.join(cwd, 'membench.config.yaml'), '# nothing yet\n');
    const run = await membench(['run', '-o', 'never', '-q'], { cwd });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      'membench: membench.config.yaml: invalid config file (1 problem)\nmembench.config.yaml:1:1: (document): the config file is empty',
    );
    expect(existsSync(path.join(cwd, 'never'))).toBe(false);
  });

  it('locates bad datasets and errata entries at file:line:col, as it does other keys', async () => {
    const cwd = await tempDir('membench-config-cli-');
    await writeFile(
      path.join(cwd, 'membench.config.yaml'),
      'strategies: [buffer]\ndatasets: [locomo:missing.json]\nerrata: errata.json\n',
    );
    await writeFile(path.join(cwd, 'errata.json'), '{ "errata": { "conv-a qa[0]": { "drop": true } } }');
    const run = await membench(['run', '-o', 'never', '-q'], { cwd });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `membench.config.yaml:2:12: datasets[0]: locomo:missing.json: no such file (${path.join(cwd, 'missing.json')}; relative paths are read from the config file's dir)`,
    );
    expect(run.stderr).toContain(
      `membench.config.yaml:3:9: errata: ${path.join(cwd, 'errata.json')}: not a valid errata file; ${path.join(cwd, 'errata.json')}:1:31: errata.conv-a qa[0]`,
    );
    expect(existsSync(path.join(cwd, 'never'))).toBe(false);
  });

  it("locates limit: without datasets: in the file, in its words, not --limit's", async () => {
    const cwd = await tempDir('membench-config-cli-');
    await writeFile(path.join(cwd, 'membench.config.yaml'), 'strategies: [window]\nlimit: 3\n');
    const run = await membench(['run', '-o', 'never', '-q'], { cwd });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      'membench: membench.config.yaml: invalid config file (1 problem)\nmembench.config.yaml:2:1: limit: applies to dataset imports only: it needs `datasets:` (e.g. `datasets: [locomo:data/locomo10.json]`) or --dataset; else drop it\n',
    );
    // --dataset on the command line is what the file's limit acts on.
    const withFlag = await membench(['run', '--dataset', 'locomo:missing.json', '-o', 'never', '-q'], { cwd });
    expect(withFlag.stderr).not.toContain('limit');
    expect(existsSync(path.join(cwd, 'never'))).toBe(false);
  });

  it('exits 2 with file:line:col for a bad config file, before running anything', async () => {
    const cwd = await tempDir('membench-config-cli-');
    await writeFile(path.join(cwd, 'ci.json'), '{\n  "strategies": ["window"],\n  "trials": "two"\n}\n');
    const run = await membench(['run', '--config', 'ci.json', '-o', 'never'], { cwd });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      'membench: ci.json: invalid config file (1 problem)\nci.json:3:13: trials: expected a whole number from 1 to 1000, got "two"',
    );
  });
});

describe('judgeThreshold in a config file', () => {
  it('gates the judges as --judge-threshold does: refused (exit 2) when no judge runs', async () => {
    const cwd = await tempDir('membench-config-cli-');
    await writeFile(path.join(cwd, 'membench.config.yaml'), 'strategies: [buffer]\njudgeThreshold: 0.8\n');
    const run = await membench(['run', '-o', 'never', '-q'], { cwd });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      "judgeThreshold 0.8 (the config file's): no judge runs; name one with --judge (offline or openai:NAME)",
    );
    expect(existsSync(path.join(cwd, 'never'))).toBe(false);
  });
});

describe('the worker count', () => {
  it('defaults to one more than the cores (sync cells wait on fsyncs); a config file or -w sets it', async () => {
    const config = path.join(await tempDir('membench-workers-'), 'membench.config.yaml');
    await writeFile(config, 'workers: 5\n');
    const workers = async (file: string | undefined, flags: { workers?: number }) =>
      (await resolveSettings({ ...(file ? { config: file } : {}), ...flags })).workers;
    expect(await workers(undefined, {})).toBe(os.availableParallelism() + 1);
    expect(await workers(config, {})).toBe(5);
    expect(await workers(config, { workers: 1 })).toBe(1);
  });
});
