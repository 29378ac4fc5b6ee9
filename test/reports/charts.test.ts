import { createCanvas, loadImage } from '@napi-rs/canvas';
import { describe, expect, it } from 'vitest';
import { invariantGrid } from '../../harness/results/durability-matrix.js';
import { paretoFront, summarizeSettings } from '../../reports/chart-data.js';
import { logAxisBounds, logTickLabel, SETTING_COLORS, seriesStyles, slug } from '../../reports/chart-style.js';
import { chartSpecs } from '../../reports/chart-specs.js';
import { CHART_FONT_FAMILY, prepareCharts, renderChartPng, renderCharts } from '../../reports/charts.js';
import { renderChartsInParallel } from '../../reports/chart-thread.js';
import { cellOf, durability, renameScenario, smallRun } from './fixture.js';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Width and height from the IHDR chunk (bytes 16..24 of every PNG). */
const pngSize = (png: Buffer) => ({ width: png.readUInt32BE(16), height: png.readUInt32BE(20) });

/** Share of pixels that are not plain white, and how many distinct colours the image has. */
async function inkOf(png: Buffer): Promise<{ ink: number; colours: number }> {
  const image = await loadImage(png);
  const canvas = createCanvas(image.width, image.height);
  const context = canvas.getContext('2d');
  context.drawImage(image, 0, 0);
  const { data } = context.getImageData(0, 0, image.width, image.height);
  let ink = 0;
  const colours = new Set<number>();
  for (let index = 0; index < data.length; index += 4) {
    const [red, green, blue] = [data[index]!, data[index + 1]!, data[index + 2]!];
    if (red < 245 || green < 245 || blue < 245) ink++;
    colours.add((red << 16) | (green << 8) | blue);
  }
  return { ink: ink / (image.width * image.height), colours: colours.size };
}

describe('chart data', () => {
  it('leads with recall vs tokens and recall by distance, then a token growth chart per scenario, latency and the window sweep; no durability chart without fault data', () => {
    const ids = chartSpecs(smallRun()).map((spec) => spec.id);
    expect(ids).toEqual([
      'recall-vs-tokens',
      'recall-by-distance-exchanges',
      'recall-by-distance-tokens',
      'tokens-recipes-zh',
      'tokens-preference-corrections',
      'latency-load',
      'latency-save',
      'sweep-window-k',
    ]);
  });

  it('places no ranking-only setting by context tokens it did not record: no recall-vs-tokens or growth chart, sweeps of recall alone', () => {
    const ranked = smallRun();
    // As a --protocol run records its cells: no turns, no evidence distance.
    for (const cell of ranked.cells)
      if (cell.status === 'ok') {
        Object.assign(cell, { turns: [], skipped: ['turns', 'answers', 'distance'], group: 'longmemeval:s.json' });
        for (const probe of cell.probes) delete probe.distance;
      }
    const specs = chartSpecs(ranked);
    expect(specs.map((spec) => spec.id)).toEqual(['sweep-window-k']);
    const sweep = specs[0]!.config;
    expect((sweep.data.datasets as { label: string }[]).map((set) => set.label)).toEqual([
      'context recall (left axis)',
    ]);
    expect(Object.keys(sweep.options?.scales ?? {})).not.toContain('tokens');
    // A setting run whole beside them still has its tokens drawn.
    const sweepOf = chartSpecs(smallRun()).find((spec) => spec.id === 'sweep-window-k')!;
    expect((sweepOf.config.data.datasets as { label: string }[]).map((set) => set.label)).toContain(
      'total context tokens (right axis)',
    );
  });

  it('charts a scenario group once (median and p90 by turn), not once per scenario', () => {
    const result = smallRun();
    for (const cell of result.cells) Object.assign(cell, { group: 'locomo:locomo10.json' });
    const ids = chartSpecs(result).map((spec) => spec.id);
    expect(ids.filter((id) => id.startsWith('tokens-'))).toEqual([`tokens-group-${slug('locomo:locomo10.json')}`]);
    const growth = chartSpecs(result).find((spec) => spec.id.startsWith('tokens-group-'))!;
    expect((growth.config.data.datasets as { label: string }[]).map((set) => set.label)).toContain('buffer p90');
    // With the dataset's own labels, one bar chart of recall by category for the group (another
    // results object: the specs of one are made once).
    const labeled = structuredClone(result);
    for (const cell of labeled.cells)
      for (const probe of cell.probes)
        probe.label = probe.category === 'update' ? 'knowledge-update' : 'single-session-user';
    const categories = chartSpecs(labeled).find((spec) => spec.id.startsWith('categories-group-'))!;
    expect(categories.config.data.labels).toEqual(['knowledge-update', 'single-session-user']);
    expect(chartSpecs(labeled).length).toBeLessThanOrEqual(12);
    expect(chartSpecs(labeled)).toBe(chartSpecs(labeled));
  });

  it('cuts a name of 10,000 characters (a group, a setting, a probe label) where a chart draws it, so it stays on the canvas', async () => {
    const long = (letter: string) => letter.repeat(10_000);
    const result = smallRun();
    for (const cell of result.cells) {
      Object.assign(cell, { group: long('G') });
      if (cell.setting === 'window(k=2)') cell.setting = `window(k=2,tag=${long('W')})`;
      for (const probe of cell.probes) probe.label = probe.category === 'update' ? long('L') : 'short';
    }
    const specs = chartSpecs(result);
    const texts = specs.flatMap((spec) => [
      String(spec.config.options?.plugins?.title?.text),
      ...(spec.config.data.labels ?? []).flat().map(String),
      ...(spec.config.data.datasets as { label?: string; pointLabel?: string }[]).flatMap((set) =>
        [set.label, set.pointLabel].filter((text) => text !== undefined),
      ),
    ]);
    expect(texts.filter((text) => text.includes('WWWW')).length).toBeGreaterThan(0);
    expect(texts.filter((text) => [...text].length > 100).map((text) => text.slice(0, 80))).toEqual([]);
    expect(texts).toContain('short');
    const categories = specs.find((spec) => spec.id.startsWith('categories-group-'))!;
    expect(categories.config.data.labels!.map((label) => [...String(label)].length <= 48)).toEqual([true, true]);
    const recall = specs.find((spec) => spec.id === 'recall-vs-tokens')!;
    expect((await inkOf(await renderChartPng(recall))).ink).toBeGreaterThan(0);
  });

  it('cuts a Chinese name by its width, a hanzi two columns, so a title of hanzi stays on the canvas as one of letters does', () => {
    const result = smallRun();
    for (const cell of result.cells) {
      Object.assign(cell, { group: '家常菜'.repeat(3000) });
      for (const probe of cell.probes) probe.label = probe.category === 'update' ? '过敏信息'.repeat(3000) : '人数';
    }
    const categories = chartSpecs(result).find((spec) => spec.id.startsWith('categories-group-'))!;
    const { fontFamily } = prepareCharts();
    const context = createCanvas(10, 10).getContext('2d');
    context.font = `bold 18px ${fontFamily}`;
    // The chart is 960 pixels wide: its title was cut at 100 characters, 100 hanzi of about 18 pixels each.
    expect(context.measureText(String(categories.config.options?.plugins?.title?.text)).width).toBeLessThan(960);
    context.font = `12px ${fontFamily}`;
    const labels = categories.config.data.labels!.map(String);
    expect(labels).toContain('人数');
    // Two categories share the axis: each label within its half (47 hanzi took 564 pixels of 480).
    for (const label of labels) expect(context.measureText(label).width).toBeLessThan(480);
  });

  it('leaves a setting whose probes measured no answer recall (ranking-only cells) out of recall by category, never at 0', () => {
    const result = smallRun();
    for (const cell of result.cells) {
      Object.assign(cell, { group: 'longmemeval:s.json' });
      for (const probe of cell.probes) {
        probe.label = 'single-session-user';
        if (cell.setting !== 'buffer') continue;
        // As a ranking-only cell records them: answer recall not measured, nothing in context.
        delete probe.answerRecall;
        if (probe.contextRecall !== undefined) probe.contextRecall = false;
      }
    }
    const categories = chartSpecs(result).find((spec) => spec.id.startsWith('categories-group-'))!;
    const sets = categories.config.data.datasets as { label: string; data: (number | null)[] }[];
    expect(sets.find((set) => set.label === 'buffer')?.data).toEqual([null]);
    expect(sets.find((set) => set.label === 'window(k=2)')?.data[0]).toBeGreaterThan(0);
  });

  it("shows window's cliff in recall by distance: held within K exchanges, lost beyond", () => {
    const spec = chartSpecs(smallRun()).find((item) => item.id === 'recall-by-distance-exchanges')!;
    const labels = spec.config.data.labels as string[];
    const window = (spec.config.data.datasets as { label: string; data: (number | null)[] }[]).find(
      (set) => set.label === 'window(k=2)',
    )!;
    const buffer = (spec.config.data.datasets as { label: string; data: (number | null)[] }[]).find(
      (set) => set.label === 'buffer',
    )!;
    // Fine buckets: each distance up to 32 is its own point, so the cliff shows right after K = 2.
    expect(labels).toContain('2');
    expect(labels).toContain('3');
    expect(window.data[labels.indexOf('2')]).toBe(1);
    const beyond = labels.flatMap((label, index) => (label.includes('–') || Number(label) > 4 ? [index] : []));
    expect(beyond.length).toBeGreaterThan(0);
    const windowBeyond = beyond.map((index) => window.data[index]).filter((value): value is number => value !== null);
    expect(windowBeyond.reduce((sum, value) => sum + value, 0) / windowBeyond.length).toBeLessThan(0.5);
    expect(beyond.every((index) => buffer.data[index] === null || buffer.data[index] === 1)).toBe(true);
  });

  it('gives every setting, in its order in the run, a colour, marker and line pattern of its own, used by every chart', () => {
    const result = smallRun();
    const styles = seriesStyles(result);
    expect(result.header.strategies.map((spec) => styles.get(spec.setting)!.color)).toEqual(
      SETTING_COLORS.slice(0, result.header.strategies.length),
    );
    expect(styles.get('window(k=2)')!.pointStyle).not.toBe(styles.get('window(k=4)')!.pointStyle);
    expect(styles.get('window(k=2)')!.dash).not.toEqual(styles.get('window(k=4)')!.dash);
    // The colour follows the setting's place, not its name: renamed, the first setting stays blue.
    const renamed = structuredClone(result);
    renamed.header.strategies[0]!.setting = 'my-memory';
    for (const cell of renamed.cells) if (cell.setting === 'buffer') cell.setting = 'my-memory';
    expect(seriesStyles(renamed).get('my-memory')!.color).toBe(SETTING_COLORS[0]);
    const specs = chartSpecs(result);
    const tokenLine = (
      specs.find((spec) => spec.id === 'tokens-recipes-zh')!.config.data.datasets as {
        label: string;
        borderColor: string;
        borderDash: number[];
      }[]
    ).find((set) => set.label === 'window(k=4)')!;
    const recallPoint = (
      specs.find((spec) => spec.id === 'recall-vs-tokens')!.config.data.datasets as {
        label: string;
        borderColor: string;
      }[]
    ).find((set) => set.label.startsWith('window(k=4)'))!;
    expect(tokenLine.borderColor).toBe(styles.get('window(k=4)')!.color);
    expect(tokenLine.borderDash).toEqual(styles.get('window(k=4)')!.dash);
    expect(recallPoint.borderColor).toBe(styles.get('window(k=4)')!.color);
  });

  it('keeps twelve settings apart by colour, and a thirteenth by its marker', () => {
    const result = smallRun();
    result.header.strategies = Array.from({ length: 13 }, (_, index) => ({
      name: 'window',
      setting: `window(k=${index + 1})`,
      options: { k: index + 1 },
      durability: 'sync' as const,
    }));
    const styles = [...seriesStyles(result).values()].slice(0, 13);
    expect(new Set(styles.slice(0, 12).map((style) => style.color)).size).toBe(12);
    expect(styles[12]!.color).toBe(styles[0]!.color);
    expect(styles[12]!.pointStyle).not.toBe(styles[0]!.pointStyle);
  });

  it('ends a log axis at 1, 2 or 5 times a power of ten, so no end label crowds its neighbour', () => {
    expect(logAxisBounds([119, 491, 9997])).toEqual({ min: 100, max: 10_000 });
    expect(logAxisBounds([230, 10_400])).toEqual({ min: 200, max: 20_000 });
    expect(logAxisBounds([0.031, 4.2])).toEqual({ min: 0.02, max: 5 });
    expect(logAxisBounds([500])).toEqual({ min: 500, max: 1000 });
    const specs = chartSpecs(smallRun());
    const x = (
      specs.find((spec) => spec.id === 'recall-vs-tokens')!.config.options as {
        scales: { x: { min: number; max: number } };
      }
    ).scales.x;
    for (const bound of [x.min, x.max])
      expect([1, 2, 5]).toContain(Math.round(bound / 10 ** Math.floor(Math.log10(bound))));
    // Labels only at 1, 2 and 5 times a power of ten, never at 8,000 and 9,000 beside 10,000.
    expect([100, 200, 300, 500, 800, 1000, 8000, 9000, 10_000, 0.05, 0.07].map(logTickLabel)).toEqual([
      '100',
      '200',
      '',
      '500',
      '',
      '1,000',
      '',
      '',
      '10,000',
      '0.05',
      '',
    ]);
  });

  it('pools recall as hits/n over scenarios and sums mean tokens per scenario', () => {
    const result = smallRun();
    const buffer = summarizeSettings(result).find((summary) => summary.setting === 'buffer')!;
    const cells = result.cells.filter((cell) => cell.setting === 'buffer');
    expect(buffer.recall.n).toBe(cells.reduce((sum, cell) => sum + cell.recall.contextRecall.n, 0));
    expect(buffer.recall.hits).toBe(cells.reduce((sum, cell) => sum + cell.recall.contextRecall.hits, 0));
    expect(buffer.contextTokens).toBe(cells.reduce((sum, cell) => sum + cell.tokens.contextTotal, 0));
    expect(buffer.saveMs.n).toBe(cells.reduce((sum, cell) => sum + cell.turns.length, 0));
  });

  it('marks the Pareto front: nothing cheaper with at least equal recall', () => {
    const front = paretoFront([
      { setting: 'cheap', tokens: 100, recall: 0.2 },
      { setting: 'dominated', tokens: 300, recall: 0.2 },
      { setting: 'middle', tokens: 200, recall: 0.6 },
      { setting: 'best', tokens: 900, recall: 1 },
      { setting: 'worse-and-dearer', tokens: 950, recall: 0.9 },
    ]);
    expect([...front].sort()).toEqual(['best', 'cheap', 'middle']);
  });

  it('makes file-safe ids that keep ASCII names and never collide for Chinese ones', () => {
    expect(slug('recipes-zh')).toBe('recipes-zh');
    expect(slug('中文食谱')).toMatch(/^x-[0-9a-f]{8}$/u);
    expect(slug('中文食谱')).not.toBe(slug('中文菜谱'));
    expect(slug('Recipes ZH')).toMatch(/^recipes-zh-[0-9a-f]{8}$/u);
  });

  it('draws the durability matrix when cells carry fault outcomes', () => {
    const result = smallRun();
    Object.assign(cellOf(result, 'recipes-zh/buffer'), {
      durabilityOutcome: durability(3, { '1': [4, 0], '2': [4, 1], '6': [0, 0] }),
    });
    Object.assign(cellOf(result, 'preference-corrections/buffer'), {
      durabilityOutcome: durability(2, { '1': [3, 0], '2': [3, 0] }),
    });
    Object.assign(cellOf(result, 'recipes-zh/window(k=2)'), { durabilityOutcome: durability(1, { '1': [2, 2] }) });
    const noKeys = {
      ...structuredClone(cellOf(result, 'recipes-zh/window(k=2)')),
      id: 'recipes-zh/window(k=2)/no-keys',
    };
    Object.assign(noKeys, {
      durabilityOutcome: { ...(durability(1, { '3': [1, 1] }) as object), idempotencyKeys: false },
    });
    expect(invariantGrid([...result.cells, noKeys])).toMatchObject({
      rows: ['buffer', 'window(k=2)', 'window(k=2) [no idempotency keys]'],
      columns: ['1', '2', '3'],
      crashes: [5, 1, 1],
    });
    expect(invariantGrid(result.cells)).toEqual({
      rows: ['buffer', 'window(k=2)'],
      columns: ['1', '2'],
      values: [
        [
          { checks: 7, violations: 0 },
          { checks: 7, violations: 1 },
        ],
        [{ checks: 2, violations: 2 }, null],
      ],
      crashes: [5, 1],
      errored: [0, 0],
    });
    const spec = chartSpecs(result).find((item) => item.id === 'durability')!;
    const [held, violated] = spec.config.data.datasets.map((set) => set.data);
    expect(held).toEqual([{ x: '1 acknowledged memories survive crashes', y: 'buffer (5 crashes)' }]);
    expect(violated).toEqual([
      { x: '2 user input persisted before the model call', y: 'buffer (5 crashes)' },
      { x: '1 acknowledged memories survive crashes', y: 'window(k=2) (1 crashes)' },
    ]);
  });
});

describe('PNG charts', () => {
  it('renders every chart as a valid PNG of its size that is not blank', async () => {
    const result = renameScenario(smallRun(), 'recipes-zh', '中文食谱');
    Object.assign(cellOf(result, '中文食谱/window(k=4)'), {
      durabilityOutcome: durability(2, { '1': [3, 1], '2': [3, 0], '3': [1, 0] }),
    });
    Object.assign(cellOf(result, '中文食谱/buffer'), {
      durabilityOutcome: durability(2, { '1': [3, 0], '2': [3, 0] }),
    });
    const specs = chartSpecs(result);
    expect(specs.at(-1)!.id).toBe('durability');
    const charts = renderCharts(result);
    expect(charts.map(([name]) => name)).toEqual(specs.map((spec) => `${spec.id}.png`));
    for (const [index, [name, png]] of charts.entries()) {
      expect(png.subarray(0, 8).equals(PNG_SIGNATURE), name).toBe(true);
      expect(pngSize(png), name).toEqual({ width: specs[index]!.width, height: specs[index]!.height });
      const { ink, colours } = await inkOf(png);
      expect(ink, `${name} has ink`).toBeGreaterThan(0.01);
      expect(colours, `${name} has colours`).toBeGreaterThan(8);
    }
  });

  it('draws Chinese with real glyphs from the bundled font, not tofu boxes', async () => {
    expect(prepareCharts().fontFamily).toContain(CHART_FONT_FAMILY);
    const glyph = (text: string) => {
      const canvas = createCanvas(48, 48);
      const context = canvas.getContext('2d');
      context.fillStyle = '#fff';
      context.fillRect(0, 0, 48, 48);
      context.fillStyle = '#000';
      context.font = `36px "${CHART_FONT_FAMILY}"`;
      context.fillText(text, 4, 40);
      return canvas.toBuffer('image/png');
    };
    const [eat, spectrum, other] = [glyph('食'), glyph('谱'), glyph('菜')];
    expect((await inkOf(eat)).ink).toBeGreaterThan(0.05);
    // Missing glyphs all render as the same box: distinct characters must differ.
    expect(eat.equals(spectrum)).toBe(false);
    expect(spectrum.equals(other)).toBe(false);
  });

  it('renders the same PNG bytes when each chart is encoded on the thread pool while the next is drawn (in this thread where no worker entry is built)', async () => {
    const result = smallRun();
    const inParallel = await renderChartsInParallel(result);
    const one = renderCharts(result);
    expect(inParallel.map(([name]) => name)).toEqual(one.map(([name]) => name));
    for (const [index, [name, png]] of inParallel.entries()) {
      expect(png.equals(one[index]![1]), name).toBe(true);
      expect((await inkOf(png)).ink, `${name} has ink`).toBeGreaterThan(0.01);
    }
  });

  it('renders a chart whose only data is empty without throwing', () => {
    const result = smallRun();
    result.cells = result.cells.filter((cell) => cell.setting === 'buffer').slice(0, 1);
    for (const spec of chartSpecs(result)) expect(renderChartPng(spec).length).toBeGreaterThan(1000);
  });
});
