/** runToDir as a program calls it: settings that cannot run are refused before the out dir is touched or a cell starts. */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { runToDir } from '../../../harness/commands/run-to-dir.js';
import { MembenchError } from '../../../harness/core/errors.js';
import { resolveSettings } from '../../../harness/run/layers.js';
import type { SettingValues } from '../../../harness/run/settings.js';
import { tempDir } from '../../helpers/temp-dir.js';

describe('runToDir refusals', () => {
  let cwd: string;
  beforeEach(async () => {
    cwd = await tempDir('membench-run-to-dir-');
  });

  const refusal = async (flags: SettingValues, extra: { resume?: string; judgeThresholdText?: string } = {}) => {
    const settings = await resolveSettings(flags, cwd);
    const cells: string[] = [];
    const error = await runToDir({
      settings,
      flags,
      ...extra,
      onWarning: () => undefined,
      onCells: () => {
        cells.push('started');
        return {};
      },
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MembenchError);
    expect(cells).toEqual([]);
    return (error as MembenchError).message;
  };

  it('a resume into another dir than --out', async () => {
    const out = path.join(cwd, 'b');
    expect(await refusal({ out }, { resume: path.join(cwd, 'a') })).toBe(
      `--resume ${path.join(cwd, 'a')} writes into ${path.join(cwd, 'a')}: drop --out ${out}`,
    );
    expect(existsSync(out)).toBe(false);
  });

  it('a judge gate with no judge, quoting the flag as typed or naming the config file', async () => {
    const out = path.join(cwd, 'out');
    expect(await refusal({ out, judgeThreshold: 0.5 }, { judgeThresholdText: '0.50' })).toBe(
      '--judge-threshold 0.50: no judge runs; name one with --judge (offline or openai:NAME)',
    );
    await writeFile(path.join(cwd, 'membench.config.yaml'), 'judgeThreshold: 0.8\n');
    expect(await refusal({ out })).toBe(
      "judgeThreshold 0.8 (the config file's): no judge runs; name one with --judge (offline or openai:NAME)",
    );
    expect(existsSync(out)).toBe(false);
  });

  it('an empty out dir name', async () => {
    expect(await refusal({ out: ' ' })).toContain('--out is empty');
    expect(await refusal({}, { resume: '' })).toBe('--resume needs the run dir to finish (an unset variable?)');
  });

  it('a judge that fails after the cells keeps them and says how to judge them, the judges named again', async () => {
    const out = path.join(cwd, 'judged');
    const flags: SettingValues = {
      out,
      scenarios: ['recipes-en'],
      strategies: ['buffer'],
      judges: ['openai:x'],
      baseUrl: 'http://127.0.0.1:1/v1',
      retries: 0,
      quiet: true,
    };
    const error = await runToDir({
      settings: await resolveSettings(flags, cwd),
      flags,
      onWarning: () => undefined,
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MembenchError);
    expect((error as MembenchError).details.at(-1)).toBe(
      `the finished cells are kept in ${out}: judge them with membench run --resume ${out} --judge openai:x and the other judge flags you gave (the run dir does not keep them)`,
    );
    expect(existsSync(path.join(out, 'plan.json'))).toBe(true);
    expect(existsSync(path.join(out, 'results.json'))).toBe(false);
  });
});
