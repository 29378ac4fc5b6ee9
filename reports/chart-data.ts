/**
 * The charts of a run as plain chart.js configurations (data only, no functions), so the PNG
 * renderer (charts.ts) and report.html draw exactly the same charts from one definition.
 */
import type { ChartConfiguration, ChartDataset } from 'chart.js';
import { distribution, type Distribution, type Rate } from '../harness/core/metrics.js';
import { invariantName, type CellResult, type RunResult } from '../harness/results/schema.js';
import { cellsByStatus, measuredContextTokens } from '../harness/results/cells.js';
import { invariantGrid } from '../harness/results/durability-matrix.js';
import {
  axisTitle,
  baseOptions,
  chart,
  logAxisBounds,
  shade,
  slug,
  withAlpha,
  type ChartSpec,
  type SeriesStyle,
} from './chart-style.js';

/** A setting's figures over the whole run: what the recall, latency and sweep charts plot. */
export interface SettingSummary {
  setting: string;
  strategy: string;
  options: Record<string, unknown>;
  durability: string;
  cells: number;
  errors: number;
  /** Sum over scenarios of the mean (over ok trials) total context tokens. */
  contextTokens: number;
  /** Some turn recorded its context tokens (a ranking-only cell records none: its `contextTokens` is 0, not measured). */
  contextMeasured: boolean;
  /** Context recall pooled over every ok cell: hits and n summed. */
  recall: Rate;
  loadMs: Distribution;
  saveMs: Distribution;
}

/** Aggregates cells per setting; errored cells are counted but left out of the figures. */
export function summarizeSettings(result: RunResult): SettingSummary[] {
  const groups = new Map<string, CellResult[]>();
  for (const cell of result.cells) groups.set(cell.setting, [...(groups.get(cell.setting) ?? []), cell]);
  return [...groups].map(([setting, cells]) => {
    const { ok, errors } = cellsByStatus(cells);
    const perScenario = new Map<string, number[]>();
    for (const cell of ok)
      perScenario.set(cell.scenario, [...(perScenario.get(cell.scenario) ?? []), cell.tokens.contextTotal]);
    const contextTokens = [...perScenario.values()].reduce(
      (sum, totals) => sum + totals.reduce((a, b) => a + b, 0) / totals.length,
      0,
    );
    const n = ok.reduce((sum, cell) => sum + cell.recall.contextRecall.n, 0);
    const hits = ok.reduce((sum, cell) => sum + cell.recall.contextRecall.hits, 0);
    const turns = ok.flatMap((cell) => cell.turns);
    const first = cells[0]!;
    return {
      setting,
      strategy: first.strategy,
      options: first.options,
      durability: first.durability,
      cells: cells.length,
      errors: errors.length,
      contextTokens: Math.round(contextTokens),
      contextMeasured: measuredContextTokens(turns).length > 0,
      recall: { n, hits, value: n ? hits / n : null },
      loadMs: distribution(turns.flatMap((turn) => (turn.loadMs === null ? [] : [turn.loadMs]))),
      saveMs: distribution(turns.map((turn) => turn.saveMs)),
    };
  });
}

/** Settings no other setting beats on both axes (fewer or equal tokens and at least equal recall, one strictly). */
export function paretoFront(points: readonly { setting: string; tokens: number; recall: number }[]): Set<string> {
  const front = new Set<string>();
  for (const point of points) {
    const dominated = points.some(
      (other) =>
        other.tokens <= point.tokens &&
        other.recall >= point.recall &&
        (other.tokens < point.tokens || other.recall > point.recall),
    );
    if (!dominated) front.add(point.setting);
  }
  return front;
}

/** Context tokens per turn, one line per setting: how each strategy's context grows over a conversation. */
export function tokenGrowthCharts(result: RunResult, styles: Map<string, SeriesStyle>): ChartSpec[] {
  // Scenarios of a group (a generated suite, a dataset) get one chart per group instead.
  const scenarios = [...new Set(result.cells.filter((cell) => cell.group === undefined).map((cell) => cell.scenario))];
  return scenarios.map((scenario) => {
    const bySetting = new Map<string, CellResult[]>();
    for (const cell of result.cells.filter((item) => item.scenario === scenario))
      bySetting.set(cell.setting, [...(bySetting.get(cell.setting) ?? []), cell]);
    const datasets: ChartDataset<'line', { x: number; y: number }[]>[] = [...bySetting].map(([setting, cells]) => {
      const perTurn = new Map<number, number[]>();
      const { ok, errors } = cellsByStatus(cells);
      for (const turn of ok.flatMap((cell) => cell.turns)) {
        if (turn.contextTokens !== null)
          perTurn.set(turn.turn, [...(perTurn.get(turn.turn) ?? []), turn.contextTokens]);
      }
      const style = styles.get(setting)!;
      return {
        label: errors.length ? `${setting} (${errors.length} errored)` : setting,
        data: [...perTurn]
          .sort(([a], [b]) => a - b)
          .map(([turn, values]) => ({ x: turn, y: Math.round(values.reduce((a, b) => a + b, 0) / values.length) })),
        borderColor: style.color,
        backgroundColor: style.color,
        pointStyle: style.pointStyle,
        borderDash: style.dash,
        pointRadius: 3,
        borderWidth: 2,
        tension: 0,
      };
    });
    const title = `Context tokens per turn — ${scenario}`;
    return chart(`tokens-${slug(scenario)}`, title, {
      type: 'line',
      data: { datasets },
      options: {
        ...baseOptions(
          title,
          'tokens the strategy loaded for each model call (chat overhead included); mean over trials',
        ),
        scales: {
          x: { type: 'linear', title: axisTitle('conversation turn (#)'), ticks: { precision: 0 } },
          y: { beginAtZero: true, title: axisTitle('context tokens per model call (tokens)') },
        },
      },
    } as ChartConfiguration);
  });
}

/** p50 and p95 of load or save time per setting: solid bar p50, pale bar p95, in the setting's colour. */
export function latencyChart(
  kind: 'load' | 'save',
  summaries: readonly SettingSummary[],
  styles: Map<string, SeriesStyle>,
): ChartSpec | null {
  const rows = summaries.filter((summary) => (kind === 'load' ? summary.loadMs : summary.saveMs).n > 0);
  if (rows.length === 0) return null;
  const stats = rows.map((summary) => (kind === 'load' ? summary.loadMs : summary.saveMs));
  const values = stats.flatMap((stat) => [stat.p50, stat.p95]);
  const positive = values.every((value) => value > 0);
  const logScale = positive && Math.max(...values) / Math.min(...values) > 20;
  const colors = rows.map((summary) => styles.get(summary.setting)!.color);
  const title = `${kind === 'load' ? 'Load' : 'Save'} latency per turn`;
  return chart(`latency-${kind}`, title, {
    type: 'bar',
    data: {
      labels: rows.map((summary, index) => [summary.setting, `n=${stats[index]!.n}`]),
      datasets: [
        {
          label: 'p50',
          data: stats.map((stat) => stat.p50),
          backgroundColor: colors,
          borderColor: colors,
          borderWidth: 1,
        },
        {
          label: 'p95',
          data: stats.map((stat) => stat.p95),
          backgroundColor: colors.map((color) => withAlpha(color, 0.3)),
          borderColor: colors,
          borderWidth: 1,
        },
      ],
    },
    options: {
      ...baseOptions(
        title,
        `solid bar = p50, pale bar = p95 of ${kind}() per turn, pooled over all scenarios (n = turns measured)`,
        false,
      ),
      scales: {
        x: { title: axisTitle('strategy setting') },
        y: logScale
          ? { type: 'logarithmic', ...logAxisBounds(values), title: axisTitle(`${kind} time per turn (ms, log scale)`) }
          : { beginAtZero: true, title: axisTitle(`${kind} time per turn (ms)`) },
      },
    },
  } as ChartConfiguration);
}

const isNumeric = (value: unknown): boolean =>
  typeof value === 'number' || (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)));

/** Knob sweeps: settings of one strategy that differ in exactly one knob; knob value on x, recall and tokens on two y axes. */
export function sweepCharts(summaries: readonly SettingSummary[], styles: Map<string, SeriesStyle>): ChartSpec[] {
  const charts: ChartSpec[] = [];
  const strategies = [...new Set(summaries.map((summary) => summary.strategy))];
  for (const strategy of strategies) {
    const group = summaries.filter((summary) => summary.strategy === strategy);
    if (group.length < 2) continue;
    const settings = group.map((summary) => ({
      summary,
      knobs: { ...summary.options, durability: summary.durability } as Record<string, unknown>,
    }));
    const keys = [...new Set(settings.flatMap((setting) => Object.keys(setting.knobs)))];
    for (const key of keys) {
      const lines = new Map<string, typeof settings>();
      for (const setting of settings) {
        const rest = JSON.stringify(
          Object.entries(setting.knobs)
            .filter(([other]) => other !== key)
            .sort(([a], [b]) => a.localeCompare(b)),
        );
        lines.set(rest, [...(lines.get(rest) ?? []), setting]);
      }
      for (const [lineIndex, [rest, line]] of [...lines].entries()) {
        const distinct = new Set(line.map((setting) => JSON.stringify(setting.knobs[key])));
        if (distinct.size < 2 || distinct.size !== line.length) continue;
        const numeric = line.every((setting) => isNumeric(setting.knobs[key]));
        const sorted = numeric ? [...line].sort((a, b) => Number(a.knobs[key]) - Number(b.knobs[key])) : line;
        const xs = sorted.map((setting) => (numeric ? Number(setting.knobs[key]) : String(setting.knobs[key])));
        const color = styles.get(group[0]!.setting)!.color;
        const fixed = (JSON.parse(rest) as [string, unknown][])
          .map(([name, value]) => `${name}=${String(value)}`)
          .join(', ');
        const title = `${strategy}: sweep of ${key}`;
        const point = (index: number, y: number | null) => (numeric ? { x: xs[index] as number, y } : y);
        // Ranking-only settings record no context tokens: their line would lie flat at 0.
        const priced = sorted.some((setting) => setting.summary.contextMeasured);
        charts.push(
          chart(`sweep-${slug(strategy)}-${slug(key)}${lines.size > 1 ? `-${lineIndex + 1}` : ''}`, title, {
            type: 'line',
            data: {
              ...(numeric ? {} : { labels: xs as string[] }),
              datasets: [
                {
                  label: 'context recall (left axis)',
                  yAxisID: 'recall',
                  data: sorted.map((setting, index) => point(index, setting.summary.recall.value)),
                  borderColor: color,
                  backgroundColor: color,
                  pointStyle: 'circle',
                  pointRadius: 5,
                  borderWidth: 2,
                },
                ...(priced
                  ? [
                      {
                        label: 'total context tokens (right axis)',
                        yAxisID: 'tokens',
                        data: sorted.map((setting, index) =>
                          point(index, setting.summary.contextMeasured ? setting.summary.contextTokens : null),
                        ),
                        borderColor: shade(color, -0.45),
                        backgroundColor: shade(color, -0.45),
                        borderDash: [6, 4],
                        pointStyle: 'rect',
                        pointRadius: 5,
                        borderWidth: 2,
                      },
                    ]
                  : []),
              ],
            },
            options: {
              ...baseOptions(title, `pooled over all scenarios${fixed ? `; fixed: ${fixed}` : ''}`),
              scales: {
                x: numeric
                  ? {
                      type: 'linear',
                      title: axisTitle(`${key} (knob value)`),
                      ticks: xs.every((value) => Number.isInteger(value)) ? { precision: 0 } : {},
                    }
                  : { offset: true, title: axisTitle(`${key} (knob value)`) },
                recall: {
                  type: 'linear',
                  position: 'left',
                  min: 0,
                  max: 1,
                  title: axisTitle('context recall (share of probes)'),
                },
                ...(priced
                  ? {
                      tokens: {
                        type: 'linear',
                        position: 'right',
                        beginAtZero: true,
                        grid: { drawOnChartArea: false },
                        title: axisTitle('total context tokens (tokens)'),
                      },
                    }
                  : {}),
              },
            },
          } as ChartConfiguration),
        );
      }
    }
  }
  return charts;
}

/** The durability matrix: strategy settings × invariants, each square green (held) or red (violated); absent without fault data. */
export function durabilityChart(result: RunResult): ChartSpec | null {
  const matrix = invariantGrid(result.cells);
  if (!matrix || matrix.columns.length === 0) return null;
  const rowLabels = matrix.rows.map((row, index) => `${row} (${matrix.crashes[index]} crashes)`);
  const columnLabels = matrix.columns.map((column) => invariantName(column));
  const points = (violated: boolean) =>
    matrix.rows.flatMap((_, row) =>
      matrix.columns.flatMap((_column, column) => {
        const value = matrix.values[row]![column];
        return value && value.violations > 0 === violated ? [{ x: columnLabels[column]!, y: rowLabels[row]! }] : [];
      }),
    );
  const square = { pointStyle: 'rectRounded' as const, pointRadius: 16, pointHoverRadius: 18, borderWidth: 1 };
  const title = 'Durability: invariants held or violated after crashes';
  return {
    ...chart('durability', title, {
      type: 'scatter',
      data: {
        datasets: [
          {
            label: 'held in every check',
            data: points(false),
            backgroundColor: '#2ca02c',
            borderColor: '#1b6e1b',
            ...square,
          },
          {
            label: 'violated at least once',
            data: points(true),
            backgroundColor: '#d62728',
            borderColor: '#8b1a1a',
            ...square,
          },
        ],
      },
      options: {
        ...baseOptions(
          title,
          'summed over scenarios and trials; no square = not checked for that setting; junit.xml lists each violation',
        ),
        scales: {
          x: {
            type: 'category',
            labels: columnLabels,
            offset: true,
            title: axisTitle('invariant checked after every recovery'),
          },
          y: {
            type: 'category',
            labels: rowLabels,
            offset: true,
            title: axisTitle('strategy setting (crashes reached)'),
          },
        },
      },
      // Category axes take label strings as coordinates; chart.js types only know numbers here.
    } as unknown as ChartConfiguration),
    height: Math.max(320, 170 + 48 * matrix.rows.length),
  };
}
