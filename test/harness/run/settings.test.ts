/** The settings table is the one place a run setting is described: flags, config schema, RunOptions and docs follow it. */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import yargs from 'yargs';
import { z } from 'zod';
import { MembenchError } from '../../../harness/core/errors.js';
import { resolveSettings, RUN_DEFAULTS, runOptionsOf } from '../../../harness/run/layers.js';
import type { RunExecution, RunMatrix, RunOptions, RunProviders } from '../../../harness/run/options.js';
import { renderConfigReference } from '../../../harness/run/settings-reference.js';
import { configSchema, configSchemaOf, flagValues, settingFlags } from '../../../harness/run/setting-sources.js';
import { SETTINGS, type SettingSpec } from '../../../harness/run/settings.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');

/** The real table plus one row a newcomer might add. */
const WITH_WARMUP: Record<string, SettingSpec> = {
  ...SETTINGS,
  warmupCells: {
    schema: z.number().int().min(0).max(50),
    group: 'execution',
    describe: 'cells run and thrown away before the measured ones',
    unit: 'cells',
    bounds: { whole: true, min: 0, max: 50 },
    default: 0,
    flag: { name: 'warmup-cells', commands: ['run', 'tune'], yargs: { type: 'string' } },
    config: true,
  },
};

describe('a row added to the settings table', () => {
  it('appears in --help of the commands it names, and only theirs', async () => {
    const help = async (command: 'run' | 'judge') =>
      settingFlags(yargs([]).scriptName('membench'), command, WITH_WARMUP).getHelp();
    expect(await help('run')).toMatch(/--warmup-cells\s+cells run and thrown away before the measured ones/u);
    expect(await help('judge')).not.toContain('--warmup-cells');
  });

  it('is read from its flag, parsed within its bounds and named on bad input', () => {
    expect(flagValues({ 'warmup-cells': '3' }, 'run', WITH_WARMUP)).toEqual({ warmupCells: 3 });
    expect(() => flagValues({ 'warmup-cells': '99' }, 'run', WITH_WARMUP)).toThrow(
      '--warmup-cells 99: expected a whole number from 0 to 50',
    );
  });

  it('is a key of the config file, validated by its schema', () => {
    const schema = configSchemaOf(WITH_WARMUP);
    expect(Object.keys(schema.shape)).toContain('warmupCells');
    expect(schema.parse({ warmupCells: 2 })).toEqual({ warmupCells: 2 });
    expect(schema.safeParse({ warmupCells: 51 }).success).toBe(false);
  });

  it('is a row of the config reference in the docs', () => {
    expect(renderConfigReference(WITH_WARMUP)).toContain(
      '| `warmupCells` | `--warmup-cells` | cells run and thrown away before the measured ones | cells | a whole number from 0 to 50 | 0 |',
    );
  });
});

describe('the real table', () => {
  const rows = Object.entries(SETTINGS as Record<string, SettingSpec>);

  it('gives every config row a config key, and no other row one', () => {
    expect(Object.keys(configSchema.shape)).toEqual(rows.filter(([, spec]) => spec.config).map(([key]) => key));
  });

  it("puts every run flag in docs/cli.md's `membench run --help`", () => {
    const cli = readFileSync(path.join(ROOT, 'docs/cli.md'), 'utf8');
    const run = cli.slice(
      cli.indexOf('## `membench run --help`'),
      cli.indexOf('## `membench', cli.indexOf('## `membench run --help`') + 5),
    );
    const missing = rows.filter(
      ([, spec]) => spec.flag?.commands.includes('run') && !run.includes(`--${spec.flag.name} `),
    );
    expect(missing.map(([key]) => key)).toEqual([]);
  });

  it('checks a number the same way from a flag, a config key and a library option', () => {
    expect(() => flagValues({ 'cell-timeout': '0' }, 'run')).toThrow(
      '--cell-timeout 0: expected a number from 1 to 604800',
    );
    expect(configSchema.safeParse({ cellTimeout: 0 }).error?.issues[0]?.message).toBe(
      'expected a number from 1 to 604800',
    );
  });

  it("maps each row to its RunOptions field: the option's name, its group's `live`, its unit", () => {
    expect(
      runOptionsOf({ cellTimeout: 2, isolate: true, limit: 3, retries: 1, timeout: 5, durability: ['sync'], out: 'x' }),
    ).toEqual({
      cellTimeoutMs: 2000,
      agentProcesses: true,
      datasetLimit: 3,
      durabilities: ['sync'],
      live: { maxRetries: 1, timeoutMs: 5 },
    });
  });

  it('fills in the defaults of the settings that plan the matrix, as before the table', () => {
    expect(RUN_DEFAULTS).toEqual({
      seed: 42,
      trials: 1,
      model: 'offline',
      embedder: 'hashed',
      agentProcesses: false,
      idempotency: 'one',
    });
  });

  it('types RunOptions from the table, grouped', () => {
    const matrix: RunMatrix = { strategies: ['buffer'] as const, seed: 1, datasetLimit: 2, idempotency: 'both' };
    const providers: RunProviders = { model: 'offline', cache: false, live: { maxRetries: 1 } };
    const execution: RunExecution = { workers: 2, agentProcesses: true, workerProcesses: true, cellTimeoutMs: 1000 };
    const options: RunOptions = { ...matrix, ...providers, ...execution, onWarning: () => undefined };
    // @ts-expect-error the config key is `isolate`; the option says what it does
    const renamed: RunOptions = { isolate: true };
    expect([options.seed, renamed]).toEqual([1, { isolate: true }]);
  });
});

describe('judgeThreshold', () => {
  it('is a config key as well as a flag; the flag wins; out of range is refused', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'membench-settings-'));
    try {
      const file = path.join(dir, 'membench.config.yaml');
      await writeFile(file, 'judgeThreshold: 0.8\n');
      expect((await resolveSettings({ config: file })).values.judgeThreshold).toBe(0.8);
      expect((await resolveSettings({ config: file, judgeThreshold: 0.5 })).values.judgeThreshold).toBe(0.5);
      await writeFile(file, 'judgeThreshold: 2\n');
      await expect(resolveSettings({ config: file })).rejects.toThrow(MembenchError);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the default worker count', () => {
  it('is the core count when every cell ranks only, one more otherwise, and a given count wins', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'membench-workers-'));
    try {
      const cores = os.availableParallelism();
      const workers = async (flags: Parameters<typeof resolveSettings>[0]): Promise<number> =>
        (await resolveSettings(flags, dir)).workers;
      const ranking = {
        datasets: ['longmemeval:q.json'],
        protocol: 'longmemeval' as const,
        strategies: ['bm25', 'hybrid'],
      };
      expect(await workers(ranking)).toBe(cores);
      expect(await workers({ ...ranking, workers: 5 })).toBe(5);
      expect(await workers({ ...ranking, protocolFull: true })).toBe(cores + 1);
      expect(await workers({ ...ranking, isolate: true })).toBe(cores + 1);
      expect(await workers({ ...ranking, strategies: ['bm25', 'buffer'] })).toBe(cores + 1);
      expect(await workers({ ...ranking, strategies: undefined })).toBe(cores + 1);
      expect(await workers({ ...ranking, scenarios: ['recipes-en'] })).toBe(cores + 1);
      expect(await workers({ ...ranking, protocol: undefined })).toBe(cores + 1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
