/**
 * How every chart of a run looks, in the PNGs and in report.html alike: a setting's colour, marker
 * and line pattern, the standard size, titles and legend, and log axes that end and are labelled
 * at 1, 2 and 5 times a power of ten.
 */
import type { ChartConfiguration, PointStyle } from 'chart.js';
import type { RunResult } from '../harness/results/schema.js';
import { fnv1aCodePoints } from '../harness/core/hash.js';
import { oneLine, shortenText } from '../harness/core/text.js';
import { displayWidth } from './layout.js';

/** One chart: `id` names its PNG (`charts/<id>.png`) and its canvas in report.html. */
export interface ChartSpec {
  id: string;
  title: string;
  width: number;
  height: number;
  config: ChartConfiguration;
}

/**
 * Twelve colours told apart at a glance (the category10 hues, then two darker ones), given to a
 * run's settings in their order: the first setting of every run is blue, the second orange, and
 * so on, whatever the strategies are called. A thirteenth setting starts over, with another marker.
 */
export const SETTING_COLORS = [
  '#1f77b4',
  '#ff7f0e',
  '#2ca02c',
  '#d62728',
  '#9467bd',
  '#8c564b',
  '#e377c2',
  '#7f7f7f',
  '#bcbd22',
  '#17becf',
  '#393b79',
  '#000000',
] as const;
/** The second channel, for readers who cannot tell two colours apart: a marker per setting. */
const POINT_STYLES: readonly PointStyle[] = [
  'circle',
  'triangle',
  'rect',
  'rectRot',
  'star',
  'crossRot',
  'rectRounded',
  'cross',
  'circle',
  'triangle',
  'rect',
  'rectRot',
];
/** And a line pattern per setting (solid, dashed, dotted, dash-dot), in turn. */
const LINE_DASHES: readonly number[][] = [[], [7, 3], [2, 3], [8, 3, 2, 3]];

/** Mixes a `#rrggbb` colour towards black (amount < 0) or white (amount > 0). */
export function shade(hex: string, amount: number): string {
  const target = amount < 0 ? 0 : 255;
  const weight = Math.min(1, Math.abs(amount));
  const channels = [1, 3, 5].map((start) => parseInt(hex.slice(start, start + 2), 16));
  return `#${channels
    .map((channel) =>
      Math.round(channel + (target - channel) * weight)
        .toString(16)
        .padStart(2, '0'),
    )
    .join('')}`;
}

/** `#rrggbb` plus an alpha, as chart.js accepts it. */
export function withAlpha(hex: string, alpha: number): string {
  return `${hex}${Math.round(alpha * 255)
    .toString(16)
    .padStart(2, '0')}`;
}

/** How one setting (a strategy with one parameter set) is drawn in every chart of a run. */
export interface SeriesStyle {
  strategy: string;
  color: string;
  pointStyle: PointStyle;
  /** chart.js `borderDash` of its lines ([] solid). */
  dash: number[];
}

/**
 * One style per setting, by its place among the run's settings (the header's, then any other a cell
 * carries, such as a mode priced for durability): colour, marker and line pattern. A setting keeps
 * its style in every chart of the run; no strategy name picks a colour.
 */
export function seriesStyles(result: RunResult): Map<string, SeriesStyle> {
  const settings = new Map<string, string>();
  for (const strategy of result.header.strategies) settings.set(strategy.setting, strategy.name);
  for (const cell of result.cells) if (!settings.has(cell.setting)) settings.set(cell.setting, cell.strategy);
  const styles = new Map<string, SeriesStyle>();
  [...settings].forEach(([setting, strategy], index) => {
    const round = Math.floor(index / SETTING_COLORS.length);
    styles.set(setting, {
      strategy,
      color: SETTING_COLORS[index % SETTING_COLORS.length]!,
      pointStyle: POINT_STYLES[(index + round) % POINT_STYLES.length]!,
      dash: LINE_DASHES[(index + round) % LINE_DASHES.length]!,
    });
  });
  return styles;
}

/** The longest slug before its hash: a chart id of a prefix, the slug and a hash stays well under a file name's 255 bytes. */
const MAX_SLUG_CHARS = 100;

/** A file-name-safe id: ASCII names stay readable (up to MAX_SLUG_CHARS), others get a stable hash so two names never collide. */
export function slug(name: string): string {
  const ascii = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/gu, '-')
    .replace(/^-+|-+$/gu, '');
  if (ascii === name && ascii.length <= MAX_SLUG_CHARS) return ascii;
  // Cut, the hash keeps it apart: a chart's file name is its slug (a 400-character group's failed to write, after the cells).
  const cut = ascii.slice(0, MAX_SLUG_CHARS).replace(/-+$/u, '');
  return `${cut || 'x'}-${fnv1aCodePoints(name).toString(16).padStart(8, '0')}`;
}

const WIDTH = 960;
const HEIGHT = 540;

/**
 * The longest text a chart draws, in columns (displayWidth: a CJK character counts two): its title, a series' legend entry and a point's
 * name. Every such text the runs of this repository draw is shorter (the longest, a title, about
 * 70); a name from a run that is longer (a 10,000-character setting or group) is cut with "…".
 */
export const MAX_CHART_TEXT = 100;
/**
 * The longest label of a category axis (a probe label, a setting under its bar), in columns:
 * chart.js slants long ones and gives them the plot's height, and a bar whose label was 10,000
 * characters long was not drawn at all.
 */
export const MAX_AXIS_LABEL = 48;

/**
 * A text on one line (oneLine: a line break a space, an ESC or a carriage return from a group name
 * or label as its escape, as the text reports show them), cut at `max` columns (displayWidth: a
 * hanzi takes about the room of two letters on the canvas, so a title of 100 hanzi ran off it);
 * each line of a multi-line label (an array) is treated alike.
 */
const cutText = <T>(text: T, max = MAX_CHART_TEXT): T =>
  (typeof text === 'string'
    ? shortenText(oneLine(text), max, displayWidth)
    : Array.isArray(text)
      ? text.map((line) => (typeof line === 'string' ? shortenText(oneLine(line), max, displayWidth) : line))
      : text) as T;

/**
 * The config with every text that comes from a run on one line and cut: axis labels at
 * MAX_AXIS_LABEL, the others at MAX_CHART_TEXT; the subtitle (a sweep's fixed knobs) on one line, uncut.
 */
function withCutTexts(config: ChartConfiguration): ChartConfiguration {
  const title = config.options?.plugins?.title;
  const subtitle = config.options?.plugins?.subtitle;
  return {
    ...config,
    data: {
      ...config.data,
      ...(config.data.labels ? { labels: config.data.labels.map((label) => cutText(label, MAX_AXIS_LABEL)) } : {}),
      datasets: config.data.datasets.map((dataset) => {
        const named = dataset as typeof dataset & { pointLabel?: string };
        return {
          ...dataset,
          ...(dataset.label !== undefined ? { label: cutText(dataset.label) } : {}),
          ...(named.pointLabel !== undefined ? { pointLabel: cutText(named.pointLabel) } : {}),
        };
      }),
    },
    ...(config.options?.plugins
      ? {
          options: {
            ...config.options,
            plugins: {
              ...config.options.plugins,
              ...(title ? { title: { ...title, text: cutText(title.text) } } : {}),
              ...(subtitle
                ? { subtitle: { ...subtitle, text: cutText(subtitle.text, Number.POSITIVE_INFINITY) } }
                : {}),
            },
          },
        }
      : {}),
  } as ChartConfiguration;
}

/** A chart of the standard size, its texts cut (withCutTexts). */
export const chart = (id: string, title: string, config: ChartConfiguration): ChartSpec => ({
  id,
  title,
  width: WIDTH,
  height: HEIGHT,
  config: withCutTexts(config),
});

/** Title, subtitle and legend as every chart shows them; static rendering (no animation). */
export function baseOptions(title: string, subtitle: string, legend = true): ChartConfiguration['options'] {
  return {
    responsive: false,
    animation: false,
    plugins: {
      title: { display: true, text: title, font: { size: 18, weight: 'bold' }, padding: { top: 6, bottom: 4 } },
      subtitle: { display: subtitle !== '', text: subtitle, font: { size: 12 }, padding: { bottom: 10 } },
      legend: { display: legend, position: 'bottom', labels: { usePointStyle: true, padding: 14 } },
    },
  };
}

/** An axis title in the charts' size. */
export const axisTitle = (text: string) => ({ display: true, text, font: { size: 13 } });

/**
 * The label of a log axis's tick: only at 1, 2 and 5 times a power of ten, '' elsewhere. chart.js's
 * own labels the last fifth of a log axis's ticks whatever their value ("8,000 9,000 10,000"
 * overlapping); the PNG renderer and report.html's script set this as the callback of every log
 * axis (report.html embeds its source: it must stay self-contained).
 */
export function logTickLabel(value: number): string {
  if (!(value > 0)) return '';
  const mantissa = value / 10 ** Math.floor(Math.log10(value) + 1e-9);
  return [1, 2, 5].some((step) => Math.abs(mantissa - step) < 1e-6) ? value.toLocaleString('en-US') : '';
}

/** The 1-2-5 steps a log axis ends on. */
const NICE_STEPS = [1, 2, 5] as const;

/**
 * Bounds of a log axis holding `values`, at 1, 2 or 5 times a power of ten. chart.js labels a log
 * axis at 1, 2, 3, 5 (and 15) times each power of ten and always at its ends: ends on those steps
 * keep an end's label from crowding the label next to it ("8,000 9,000 10,000").
 */
export function logAxisBounds(values: readonly number[]): { min: number; max: number } {
  const positive = values.filter((value) => value > 0);
  if (positive.length === 0) return { min: 1, max: 10 };
  const nice = (value: number, direction: 'down' | 'up'): number => {
    const power = 10 ** Math.floor(Math.log10(value));
    const candidates = [...NICE_STEPS.map((step) => step * power), 10 * power];
    return direction === 'down'
      ? Math.max(...candidates.filter((candidate) => candidate <= value * (1 + 1e-9)))
      : Math.min(...candidates.filter((candidate) => candidate >= value * (1 - 1e-9)));
  };
  const min = nice(Math.min(...positive), 'down');
  const max = nice(Math.max(...positive), 'up');
  return { min, max: max > min ? max : nice(max * 1.01, 'up') };
}
