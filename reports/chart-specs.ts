/**
 * Every chart of a run, in report order: the verdict's recall-vs-tokens chart first, recall by
 * distance, token growth (per scenario, or as a distribution per scenario group), latency, knob
 * sweeps, durability. The charts of the verdict are built here from the leaderboard's figures.
 */
import type { ChartConfiguration, ChartDataset } from 'chart.js';
import { quantileSorted } from 'simple-statistics';
import { leaderboards } from './verdict.js';
import { measuredContextTokens, okCells } from '../harness/results/cells.js';
import { recallByDistance, type DistanceUnit } from '../harness/results/by-distance.js';
import type { RunResult } from '../harness/results/schema.js';
import {
  durabilityChart,
  latencyChart,
  paretoFront,
  summarizeSettings,
  sweepCharts,
  tokenGrowthCharts,
} from './chart-data.js';
import {
  axisTitle,
  baseOptions,
  chart,
  logAxisBounds,
  seriesStyles,
  slug,
  withAlpha,
  type ChartSpec,
  type SeriesStyle,
} from './chart-style.js';

/** Context recall against context tokens per turn, one point per setting (Pareto front marked); coinciding points are nudged apart and say so. */
function recallVsTokensChart(result: RunResult, styles: Map<string, SeriesStyle>): ChartSpec | null {
  // A ranking-only setting has no context tokens to place it by (not 0 of them).
  const rows = leaderboards(result)[0]!.board.rows.filter(
    (row) => row.contextRecall.value !== null && row.contextMeasured,
  );
  if (rows.length === 0) return null;
  const points = rows.map((row) => ({
    setting: row.setting,
    tokens: Math.round(row.contextPerTurn),
    recall: row.contextRecall.value!,
    row,
  }));
  const front = paretoFront(points);
  const seen = new Map<string, string[]>();
  const placed = points.map((point) => {
    const key = `${point.tokens}|${point.recall.toFixed(3)}`;
    const before = seen.get(key) ?? [];
    seen.set(key, [...before, point.setting]);
    return { ...point, y: Math.min(1.04, point.recall + 0.012 * before.length), overlaps: before };
  });
  const frontLine = placed
    .filter((point) => front.has(point.setting))
    .sort((a, b) => a.tokens - b.tokens || a.recall - b.recall);
  const title = 'Context recall vs context tokens per turn';
  const datasets: ChartDataset[] = [
    ...placed.map((point) => {
      const style = styles.get(point.setting)!;
      const onFront = front.has(point.setting);
      const interval = point.row.contextRecall.interval;
      const ci = interval ? ` [${interval.lo.toFixed(2)}, ${interval.hi.toFixed(2)}]` : '';
      return {
        type: 'scatter' as const,
        label: `${point.setting}${onFront ? ' ★' : ''} ${point.recall.toFixed(2)}${ci} n=${point.row.contextRecall.n}${point.overlaps.length ? ` (same point as ${point.overlaps.join(', ')})` : ''}`,
        data: [{ x: point.tokens, y: point.y }],
        // Written beside the marker by drawPointLabels (reports/point-labels.ts): crowded points stay named.
        pointLabel: point.setting,
        borderColor: style.color,
        backgroundColor: onFront ? style.color : withAlpha(style.color, 0.45),
        pointStyle: style.pointStyle,
        pointRadius: onFront ? 10 : 7,
        borderWidth: onFront ? 3 : 1,
        clip: false as const,
      };
    }),
    {
      type: 'line' as const,
      label: 'Pareto front',
      data: frontLine.map((point) => ({ x: point.tokens, y: point.y })),
      borderColor: '#333333',
      backgroundColor: '#333333',
      borderDash: [6, 4],
      borderWidth: 1.5,
      pointRadius: 0,
      pointStyle: 'line' as const,
      fill: false,
      clip: false as const,
    },
  ];
  return chart('recall-vs-tokens', title, {
    type: 'scatter',
    data: { datasets },
    options: {
      ...baseOptions(
        title,
        'one point per strategy setting, pooled over the run (legend: recall [95% Wilson interval], n probes); ★ = on the Pareto front',
      ),
      scales: {
        x: {
          type: 'logarithmic',
          ...logAxisBounds(points.map((point) => point.tokens)),
          title: axisTitle('context tokens per model call (mean, log scale)'),
        },
        y: { min: 0, max: 1, title: axisTitle('context recall (share of answerable probes)') },
      },
    },
  } as ChartConfiguration);
}

/** Context recall by distance bucket, one line per setting: window's cliff at K, summary-buffer's at its token limit. */
function distanceChart(result: RunResult, unit: DistanceUnit, styles: Map<string, SeriesStyle>): ChartSpec | null {
  // Exchanges: every distance up to 32 its own point (the generated suite probes each), so K shows where it falls.
  const rows = recallByDistance(okCells(result.cells), unit, unit === 'exchanges' ? 'fine' : 'doubling');
  if (rows.length === 0) return null;
  const buckets = [...new Map(rows.map((row) => [row.bucket.hi, row.bucket])).values()].sort((a, b) => a.hi - b.hi);
  const settings = [...new Set(rows.map((row) => row.setting))];
  const datasets: ChartDataset<'line'>[] = settings.map((setting) => {
    const style = styles.get(setting)!;
    return {
      label: setting,
      data: buckets.map(
        (bucket) =>
          rows.find((row) => row.setting === setting && row.bucket.hi === bucket.hi)?.contextRecall.value ?? null,
      ),
      borderColor: style.color,
      backgroundColor: style.color,
      pointStyle: style.pointStyle,
      borderDash: style.dash,
      pointRadius: 4,
      borderWidth: 2,
      spanGaps: true,
      tension: 0,
    };
  });
  const what = unit === 'exchanges' ? 'exchanges' : 'tokens of conversation';
  const title = `Context recall by distance (${what} since the evidence)`;
  return chart(`recall-by-distance-${unit}`, title, {
    type: 'line',
    data: { labels: buckets.map((bucket) => bucket.label), datasets },
    options: {
      ...baseOptions(
        title,
        `probes bucketed by how far back their furthest evidence lies (${unit === 'exchanges' ? 'each distance up to 32, then quarters of each doubling' : 'powers of two'}); pooled over the run`,
      ),
      scales: {
        x: { title: axisTitle(`distance (${what})`) },
        y: { min: 0, max: 1, title: axisTitle('context recall (share of probes in the bucket)') },
      },
    },
  } as ChartConfiguration);
}

/** Per scenario group: median and p90 of context tokens by turn over the group's scenarios, per setting. */
function groupGrowthCharts(result: RunResult, styles: Map<string, SeriesStyle>): ChartSpec[] {
  const groups = [...new Set(result.cells.flatMap((cell) => (cell.group === undefined ? [] : [cell.group])))];
  return groups.flatMap((group) => {
    const cells = okCells(result.cells).filter((cell) => cell.group === group);
    // Ranking-only cells record no turns: nothing to draw.
    if (!cells.some((cell) => measuredContextTokens(cell.turns).length > 0)) return [];
    const settings = [...new Set(cells.map((cell) => cell.setting))];
    const datasets = settings.flatMap((setting): ChartDataset<'line', { x: number; y: number }[]>[] => {
      const perTurn = new Map<number, number[]>();
      for (const turn of cells.filter((cell) => cell.setting === setting).flatMap((cell) => cell.turns)) {
        if (turn.contextTokens !== null)
          perTurn.set(turn.turn, [...(perTurn.get(turn.turn) ?? []), turn.contextTokens]);
      }
      const series = [...perTurn]
        .sort(([a], [b]) => a - b)
        .map(([turn, values]) => ({ turn, sorted: [...values].sort((x, y) => x - y) }));
      const style = styles.get(setting)!;
      const line = (quantile: number, dashed: boolean) => ({
        label: `${setting} ${dashed ? 'p90' : 'median'}`,
        data: series.map(({ turn, sorted }) => ({ x: turn, y: Math.round(quantileSorted(sorted, quantile)) })),
        borderColor: style.color,
        backgroundColor: style.color,
        pointStyle: style.pointStyle,
        pointRadius: 0,
        borderWidth: dashed ? 1 : 2,
        ...(dashed ? { borderDash: [5, 4] } : {}),
        tension: 0,
      });
      return [line(0.5, false), line(0.9, true)];
    });
    const title = `Context tokens per turn — group ${group}`;
    return chart(`tokens-group-${slug(group)}`, title, {
      type: 'line',
      data: { datasets },
      options: {
        ...baseOptions(
          title,
          `median (solid) and p90 (dashed) over the group's ${new Set(cells.map((cell) => cell.scenario)).size} scenario(s), by turn`,
        ),
        scales: {
          x: { type: 'linear', title: axisTitle('conversation turn (#)'), ticks: { precision: 0 } },
          y: { beginAtZero: true, title: axisTitle('context tokens per model call (tokens)') },
        },
      },
    } as ChartConfiguration);
  });
}

/** Per scenario group with dataset labels: context recall by the dataset's own category, one bar per setting. */
function groupCategoryCharts(result: RunResult, styles: Map<string, SeriesStyle>): ChartSpec[] {
  const groups = [...new Set(result.cells.flatMap((cell) => (cell.group === undefined ? [] : [cell.group])))];
  return groups.flatMap((group) => {
    const cells = okCells(result.cells).filter(
      (cell) => cell.group === group && !cell.pricing && cell.durabilityOutcome?.idempotencyKeys !== false,
    );
    const labels = [
      ...new Set(
        cells.flatMap((cell) =>
          cell.probes.flatMap((probe) =>
            probe.label === undefined || probe.contextRecall === undefined || probe.answerRecall === undefined
              ? []
              : [probe.label],
          ),
        ),
      ),
    ].sort();
    if (labels.length === 0) return [];
    const settings = [...new Set(cells.map((cell) => cell.setting))];
    const datasets: ChartDataset<'bar'>[] = settings.map((setting) => {
      const probes = cells.filter((cell) => cell.setting === setting).flatMap((cell) => cell.probes);
      const style = styles.get(setting)!;
      return {
        label: setting,
        data: labels.map((label) => {
          // A probe without answer recall (a ranking-only cell's: not measured) is left out, not counted as 0; null (a gold without content words) scores by context recall.
          const answered = probes.filter(
            (probe) => probe.label === label && probe.contextRecall !== undefined && probe.answerRecall !== undefined,
          );
          const scores = answered.map((probe) => probe.answerRecall ?? (probe.contextRecall ? 1 : 0));
          return scores.length ? scores.reduce((sum, value) => sum + value, 0) / scores.length : null;
        }) as number[],
        backgroundColor: style.color,
        borderColor: style.color,
      };
    });
    const title = `Answer recall by category — group ${group}`;
    return [
      chart(`categories-group-${slug(group)}`, title, {
        type: 'bar',
        data: { labels, datasets },
        options: {
          ...baseOptions(
            title,
            "mean share of the gold answer's content words within one context message, by the dataset's own category",
          ),
          scales: {
            x: { title: axisTitle("category (the dataset's own label)") },
            y: { min: 0, max: 1, title: axisTitle('answer recall (mean over questions)') },
          },
        },
      } as ChartConfiguration),
    ];
  });
}

/**
 * Specs already made, per results object: the charts drawn and report.html (which embeds them) ask
 * for the same ones, and making them pools recall by distance over every probe again (~0.1 s of a
 * default run's end). Read-only: a drawer takes a copy (Chart.js fills in the config it is given);
 * and as with the leaderboards, a results object changed after its first report is not seen again
 * (change a copy).
 */
const made = new WeakMap<RunResult, readonly ChartSpec[]>();

/** Every chart a run's data supports, in report order. */
export function chartSpecs(result: RunResult): readonly ChartSpec[] {
  let specs = made.get(result);
  if (!specs) made.set(result, (specs = makeChartSpecs(result)));
  return specs;
}

function makeChartSpecs(result: RunResult): ChartSpec[] {
  const styles = seriesStyles(result);
  // Cells run only to price a durability mode are in the sync-or-async table, not in the latency bars or knob sweeps.
  const summaries = summarizeSettings({ ...result, cells: result.cells.filter((cell) => !cell.pricing) });
  return [
    recallVsTokensChart(result, styles),
    distanceChart(result, 'exchanges', styles),
    distanceChart(result, 'tokens', styles),
    ...tokenGrowthCharts(result, styles),
    ...groupGrowthCharts(result, styles),
    ...groupCategoryCharts(result, styles),
    latencyChart('load', summaries, styles),
    latencyChart('save', summaries, styles),
    ...sweepCharts(summaries, styles),
    durabilityChart(result),
  ].filter((spec): spec is ChartSpec => spec !== null);
}
