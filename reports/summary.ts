/** Rows and formatting shared by the console table and report.md (pure functions of results). */
import type { Rate } from '../harness/core/metrics.js';
import type { CellResult, RunResult } from '../harness/results/schema.js';

export interface SummaryRow {
  scenario: string;
  strategy: string;
  turns: number;
  contextTotal: number;
  contextMean: number;
  contextMax: number;
  maintenance: number;
  recall: string;
  stale: string;
  answer: string;
  loadP50: string;
  saveP50: string;
  status: string;
}

/** `0.75 (6/8)`, or `–` when no probe counts. */
export function formatRate(rate: Rate): string {
  if (rate.value === null) return '–';
  return `${rate.value.toFixed(2)} (${rate.hits}/${rate.n})`;
}

export function formatMs(ms: number): string {
  return ms >= 100 ? ms.toFixed(0) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3);
}

export function summaryRow(cell: CellResult): SummaryRow {
  return {
    scenario: cell.scenario,
    strategy: cell.faults && !cell.faults.idempotencyKeys ? `${cell.label} no-keys` : cell.label,
    turns: cell.turns.filter((turn) => turn.contextTokens !== null).length,
    contextTotal: cell.tokens.contextTotal,
    contextMean: Math.round(cell.tokens.contextMeanPerTurn),
    contextMax: cell.tokens.contextMax,
    maintenance: cell.tokens.maintenance,
    recall: formatRate(cell.recall.contextRecall),
    stale: formatRate(cell.recall.staleExposure),
    answer: formatRate(cell.recall.answerAccuracy),
    loadP50: formatMs(cell.latency.loadMs.p50),
    saveP50: formatMs(cell.latency.saveMs.p50),
    status: cell.status === 'ok' ? 'ok' : `error: ${cell.error ?? ''}`,
  };
}

export const SUMMARY_COLUMNS: readonly [keyof SummaryRow, string][] = [
  ['scenario', 'scenario'],
  ['strategy', 'strategy'],
  ['turns', 'turns'],
  ['contextTotal', 'ctx tokens'],
  ['contextMean', 'ctx/turn'],
  ['contextMax', 'ctx max'],
  ['maintenance', 'maint tokens'],
  ['recall', 'context recall'],
  ['stale', 'stale exposure'],
  ['answer', 'answer acc'],
  ['loadP50', 'load p50 ms'],
  ['saveP50', 'save p50 ms'],
  ['status', 'status'],
];

/** The line that says where answers came from, so offline scores are never mistaken for a live model's. */
export function modelNote(result: RunResult): string {
  return result.header.offlineModel
    ? 'Answers and summaries come from the offline reference model (deterministic, no LLM): answer accuracy measures the memory plus this stand-in, not GPT.'
    : `Answers come from ${result.header.model}.`;
}

const escapeCell = (text: string): string => text.replace(/\|/gu, '\\|').replace(/\r?\n/gu, ' ');

/** A GitHub-flavoured Markdown table (report.md and the GitHub step summaries). */
export function markdownTable(head: readonly string[], rows: readonly (readonly string[])[]): string {
  return [`| ${head.map(escapeCell).join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`, ...rows.map((row) => `| ${row.map(escapeCell).join(' | ')} |`)].join('\n');
}
