/**
 * The library's entry points given what a program in plain JavaScript can give them: values of the
 * wrong type get a MembenchError (exit 2 in a CLI, `INVALID_ARGUMENT`) naming the function and the
 * argument, not a TypeError from deep inside, and values out of range are refused as the flags
 * that set them are.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  checkScenarioText,
  compareRuns,
  createModel,
  generateWorkload,
  loadConfig,
  loadStrategyDefinition,
  MembenchError,
  mergeShards,
  parseResults,
  renderConsoleSummary,
  renderHtml,
  renderJson,
  renderJunit,
  renderMarkdown,
  resolveSettings,
  TokenCounter,
  tune,
  writeRunOutput,
} from '../index.js';
import { smallRun } from './reports/fixture.js';

/** The message `run` fails with: a MembenchError of bad input, or the test fails. */
async function refusal(run: () => unknown): Promise<string> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(MembenchError);
    expect((error as MembenchError).code).toBe('INVALID_ARGUMENT');
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
}

const anyCall =
  (f: (...args: never[]) => unknown, ...args: unknown[]) =>
  () =>
    (f as (...a: unknown[]) => unknown)(...args);

describe('library entry points refuse values of the wrong type, naming the argument', () => {
  const run = smallRun();

  it('compareRuns: runs that are not RunResults, thresholds that are not CompareThresholds', async () => {
    expect(await refusal(anyCall(compareRuns, {}, run))).toMatch(/^compareRuns base: expected a RunResult/u);
    expect(await refusal(anyCall(compareRuns, run, null))).toBe(
      'compareRuns head: expected a RunResult (what runBenchmark returns, or readResults(FILE).result), got null',
    );
    expect(await refusal(anyCall(compareRuns, run, run, { recall: 0.1 }))).toMatch(
      /^compareRuns: unknown threshold "recall": CompareThresholds has maxRecallDrop/u,
    );
    expect(await refusal(anyCall(compareRuns, run, run, { maxRecallDrop: -1 }))).toBe(
      'compareRuns thresholds.maxRecallDrop -1: expected a number from 0 to 1',
    );
    expect(await refusal(anyCall(compareRuns, run, run, { maxRecallDrop: 2 }))).toBe(
      'compareRuns thresholds.maxRecallDrop 2: expected a number from 0 to 1',
    );
    expect(await refusal(anyCall(compareRuns, run, run, { maxLatencyRatio: 0.5 }))).toBe(
      'compareRuns thresholds.maxLatencyRatio 0.5: expected a number >= 1',
    );
    expect(await refusal(anyCall(compareRuns, run, run, { latencyFalseAlarm: 1 }))).toBe(
      'compareRuns thresholds.latencyFalseAlarm 1: expected a share between 0 and 1, e.g. 0.01',
    );
    expect(await refusal(anyCall(compareRuns, run, run, { latency: 'yes' }))).toBe(
      'compareRuns thresholds.latency "yes": expected true, false or "same-machine"',
    );
    expect(compareRuns(run, run, { maxRecallDrop: 0, latency: false }).cells.length).toBeGreaterThan(0);
  });

  it('the renderers and writeRunOutput', async () => {
    for (const [name, render] of Object.entries({
      renderConsoleSummary,
      renderMarkdown,
      renderHtml,
      renderJson,
      renderJunit,
    }))
      expect(await refusal(anyCall(render, null))).toMatch(new RegExp(`^${name}: expected a RunResult`, 'u'));
    const dir = await mkdtemp(path.join(os.tmpdir(), 'membench-lib-'));
    try {
      expect(await refusal(() => writeRunOutput(run, path.join(dir, 'out'), { recallThreshold: 2 }))).toBe(
        'writeRunOutput recallThreshold 2: expected a share between 0 and 1',
      );
      expect(await refusal(anyCall(writeRunOutput, run, 5))).toBe(
        'writeRunOutput: expected the output dir as a path, got 5',
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('mergeShards, parseResults, generateWorkload, createModel, TokenCounter, loadStrategyDefinition, checkScenarioText, resolveSettings', async () => {
    expect(await refusal(anyCall(mergeShards, null))).toBe(
      'mergeShards: expected a list of shards ({ result, file } each)',
    );
    expect(await refusal(anyCall(mergeShards, [{ result: {}, file: 'a.json' }]))).toMatch(
      /^mergeShards shard 1 \(a\.json\): expected a RunResult/u,
    );
    expect(await refusal(anyCall(parseResults, 5))).toBe(
      'parseResults: expected the text of a results.json, got number',
    );
    expect(await refusal(() => parseResults('{}'))).toMatch(/^the results text: not a membench results file/u);
    expect(await refusal(anyCall(generateWorkload, null))).toBe(
      'generateWorkload: expected a generator spec object, got null',
    );
    const spec = await refusal(anyCall(generateWorkload, { name: 'x', seed: 'x' }));
    expect(spec).toBe('generateWorkload: not a valid generator spec');
    expect(await refusal(anyCall(createModel, 5))).toBe('createModel: expected "offline" or "openai:NAME", got number');
    expect(await refusal(() => new (TokenCounter as unknown as new (model: unknown) => unknown)(5))).toBe(
      'TokenCounter: expected a model name (e.g. gpt-4o), got number',
    );
    expect(await refusal(anyCall(loadStrategyDefinition, 5))).toMatch(
      /^loadStrategyDefinition: expected a strategy name/u,
    );
    expect(await refusal(anyCall(checkScenarioText, null, 'x.yaml'))).toBe(
      'checkScenarioText: expected the text of a scenario file, got null',
    );
    expect(await refusal(anyCall(resolveSettings, null))).toBe(
      'resolveSettings: expected an object of setting values (SettingValues), got null',
    );
  });

  it("tune's own fields", async () => {
    const base = { strategy: 'window', knob: 'k', values: [1, 2], targetRecall: 0.5, scenarios: ['recipes-en'] };
    expect(await refusal(anyCall(tune, { ...base, values: '1,2' }))).toBe(
      'tune values "1,2": expected a list of numbers, like [2, 4, 8]',
    );
    expect(await refusal(anyCall(tune, { ...base, values: [] }))).toBe('tune values: no values to sweep');
    expect(await refusal(anyCall(tune, { ...base, metric: 'cost' }))).toMatch(/^tune metric "cost": expected one of /u);
    expect(await refusal(anyCall(tune, { ...base, knob: 7 }))).toMatch(/^tune knob 7: expected a name/u);
  });

  it('names a config file outside the working dir by its own path, not as ../../…', async () => {
    const outside = path.join(os.tmpdir(), `membench-missing-${process.pid}.yaml`);
    expect(path.relative(process.cwd(), outside).startsWith('..')).toBe(true);
    expect(await refusal(() => loadConfig(outside))).toMatch(
      new RegExp(`^${outside.replace(/[.]/gu, '\\.')}:1:1: `, 'u'),
    );
  });
});
