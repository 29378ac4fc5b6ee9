import { describe, expect, it } from 'vitest';
import { MembenchError } from '../../../harness/core/errors.js';
import { parseValues, renderTune, tune } from '../../../harness/run/tune.js';
import { ok } from '../../helpers/cells.js';

describe('parseValues', () => {
  it.each([
    ['1..5', [1, 2, 3, 4, 5]],
    ['2..10..4', [2, 6, 10]],
    ['0.1..0.5..0.1', [0.1, 0.2, 0.3, 0.4, 0.5]],
    ['8,1,2,4', [1, 2, 4, 8]],
    ['1e1,2.5', [2.5, 10]],
    ['7', [7]],
  ])('reads %s', (text, values) => {
    expect(parseValues(text)).toEqual(values);
  });

  it.each([
    ['5..1', /5 is above 1/u],
    ['1..9..0', /the step must be above 0/u],
    ['1..x', /"x" is not a number/u],
    ['1,,2', /"" is not a number/u],
    ['1..100000', /100000 values, more than 200/u],
    // A repeat, as -p window.k=2,2 is refused; numbers in decimal notation only, as every numeric flag.
    ['8,1,2,4,2', /2 is listed twice: give each value once/u],
    ['0x2,4', /"0x2" is not a number/u],
    ['1,1e400', /"1e400" is not a number/u],
  ])('refuses %s', (text, message) => {
    expect(() => parseValues(text)).toThrow(MembenchError);
    expect(() => parseValues(text)).toThrow(message);
  });
});

describe('tune', () => {
  it('refuses knobs that are missing or not numeric before running anything', async () => {
    await expect(
      tune({ strategy: 'window', knob: 'q', values: [1], targetRecall: 0.5, scenarios: ['recipes-en'] }),
    ).rejects.toThrow(/strategy "window" has no knob "q" \(knobs: k, maxTokens\)$/u);
    // run's -p form, another strategy's knob: each said with what tune takes.
    for (const [knob, hint] of [
      ['window.k', ': tune takes the knob alone, its strategy from -s and its values from --values: -p k'],
      ['k=2,4', ': tune takes the knob alone, its strategy from -s and its values from --values: -p k --values 2,4'],
      ['bm25.k', ": tune sweeps a knob of the -s strategy (window), named alone; for bm25's: -s bm25 -p k"],
    ])
      await expect(
        tune({ strategy: 'window', knob: knob!, values: [1], targetRecall: 0.5, scenarios: ['recipes-en'] }),
      ).rejects.toThrow(`--param ${knob}: strategy "window" has no knob "${knob}" (knobs: k, maxTokens)${hint}`);
    await expect(
      tune({
        strategy: 'entity',
        knob: 'extractInstruction',
        values: [1, 2],
        targetRecall: 0.5,
        scenarios: ['recipes-en'],
      }),
    ).rejects.toThrow(/entity\.extractInstruction is not a numeric knob/u);
    await expect(
      tune({ strategy: 'window', knob: 'k', values: [0, 1], targetRecall: 0.5, scenarios: ['recipes-en'] }),
    ).rejects.toThrow(/--values 0,1: window\.k=0: out of range: too small/u);
    await expect(
      tune({ strategy: 'window', knob: 'k', values: [-1, 2], targetRecall: 0.5, scenarios: ['recipes-en'] }),
    ).rejects.toThrow(/--values -1,2: window\.k=-1: k cannot be negative: too small/u);
    await expect(
      tune({ strategy: 'window', knob: 'k', values: [1.5, 2.5], targetRecall: 0.5, scenarios: ['recipes-en'] }),
    ).rejects.toThrow('--values 1.5,2.5: window.k=1.5: k takes whole numbers');
    await expect(
      tune({ strategy: 'window', knob: 'k', values: [1], targetRecall: 1.5, scenarios: ['recipes-en'] }),
    ).rejects.toThrow(/tune targetRecall 1.5: expected a share between 0 and 1/u);
  });

  it('pools recall over scenarios and picks the cheapest setting meeting the target', async () => {
    const result = await tune({
      strategy: 'window',
      knob: 'k',
      values: [2, 8, 16],
      targetRecall: 0.4,
      scenarios: ['recipes-en', 'recipes-zh'],
    });
    expect(result.rows.map((row) => row.value)).toEqual([2, 8, 16]);
    for (const row of result.rows) {
      const cells = result.run.cells.filter((cell) => cell.setting === row.setting).map(ok);
      expect(cells).toHaveLength(2);
      expect(row.recall.hits).toBe(cells[0]!.recall.contextRecall.hits + cells[1]!.recall.contextRecall.hits);
      expect(row.cost).toBe(cells[0]!.tokens.contextTotal + cells[1]!.tokens.contextTotal);
      expect(row.meets).toBe(row.recall.value! >= 0.4);
    }
    const meeting = result.rows.filter((row) => row.meets);
    expect(meeting.length).toBeGreaterThan(0);
    expect(result.best?.cost).toBe(Math.min(...meeting.map((row) => row.cost)));
    // Within noise: the 95 % Wilson interval reaches the target, so 14 probes cannot tell it from a setting that meets it.
    for (const row of result.rows) expect(row.withinNoise).toBe(row.interval!.hi >= 0.4);
    const noisy = result.rows.filter((row) => row.withinNoise);
    expect(result.withinNoise?.cost).toBe(Math.min(...noisy.map((row) => row.cost)));
    expect(result.withinNoise!.cost).toBeLessThanOrEqual(result.best!.cost);
    if (result.withinNoise !== result.best)
      expect(renderTune(result)).toContain(
        `cheapest setting within noise of the target: ${result.withinNoise!.setting}`,
      );
  });

  it('says that no value meets the target only when none does', async () => {
    // One value, meeting the target: it is both the cheapest meeting it and the cheapest within noise.
    const result = await tune({
      strategy: 'window',
      knob: 'k',
      values: [50],
      targetRecall: 0.5,
      scenarios: ['recipes-en'],
    });
    expect(result.best?.value).toBe(50);
    expect(result.withinNoise).toBe(result.best);
    const text = renderTune(result);
    expect(text).toContain('cheapest setting meeting the target: window(k=50)');
    expect(text).not.toContain('no value of k meets');
  });
});
