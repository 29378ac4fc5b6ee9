/** The probe table's columns, listed once: report.md and report.html both render this list. */
import type { OkCell, ProbeRecord } from '../harness/results/schema.js';
import { formatMs } from './summary.js';

/** One column: its header, its text, and what report.html sorts it by. */
export interface ProbeColumn {
  title: string;
  text(cell: OkCell, probe: ProbeRecord): string;
  /** The number report.html sorts by (the text otherwise). */
  sort?(probe: ProbeRecord): number | null;
  /** report.md's fuller text, where its rows say more than a sortable cell would. */
  markdown?(cell: OkCell, probe: ProbeRecord): string;
  /** Only in report.html (report.md's table stays narrow). */
  htmlOnly?: true;
}

const yesNo = (value: boolean | undefined): string => (value === undefined ? '–' : value ? 'yes' : 'no');

export const PROBE_COLUMNS: readonly ProbeColumn[] = [
  { title: 'scenario', text: (cell) => cell.scenario },
  { title: 'strategy', text: (cell) => cell.setting },
  { title: 'step', text: (_, probe) => probe.id ?? String(probe.step), sort: (probe) => probe.step },
  {
    title: 'category',
    text: (_, probe) => probe.category,
    markdown: (_, probe) => (probe.label ? `${probe.category} (${probe.label})` : probe.category),
  },
  { title: 'question', text: (_, probe) => probe.question },
  { title: 'in context', text: (_, probe) => yesNo(probe.contextRecall) },
  {
    title: 'evidence',
    text: (_, probe) => (probe.evidenceRecall === null ? '–' : probe.evidenceRecall.toFixed(2)),
    sort: (probe) => probe.evidenceRecall,
  },
  { title: 'stale', text: (_, probe) => yesNo(probe.staleExposure) },
  {
    title: 'conflict',
    text: (_, probe) => yesNo(probe.conflictExposure),
    markdown: (_, probe) =>
      probe.conflictExposure
        ? probe.currentAfterStale === undefined
          ? 'yes'
          : probe.currentAfterStale
            ? 'yes (current last)'
            : 'yes (stale last)'
        : 'no',
  },
  {
    title: 'ctx tokens',
    text: (_, probe) => (probe.contextTokens === undefined ? '–' : String(probe.contextTokens)),
    sort: (probe) => probe.contextTokens ?? null,
  },
  { title: 'load ms', text: (_, probe) => formatMs(probe.loadMs), sort: (probe) => probe.loadMs, htmlOnly: true },
  { title: 'answer', text: (_, probe) => probe.answer ?? '–' },
];

/** The columns of report.md's probe table. */
export const MARKDOWN_PROBE_COLUMNS = PROBE_COLUMNS.filter((column) => !column.htmlOnly);
