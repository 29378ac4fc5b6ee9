/** Rows and formatting shared by the console table and report.md (pure functions of results). */
import { peerNote } from '../harness/core/peers.js';
import { oneLine } from '../harness/core/text.js';
import type { Rate } from '../harness/core/metrics.js';
import { MAX_ANSWER_CHARS } from '../harness/core/numbers.js';
import { counted } from '../harness/core/plural.js';
import { cellsByStatus, cutAnswersWords, okCells } from '../harness/results/cells.js';
import {
  SKIPPED_WORK,
  type CellResult,
  type ErrorCell,
  type Mean,
  type OkCell,
  type RecallSummary,
  type RunResult,
} from '../harness/results/schema.js';

/** What a per-cell table shows in a figure's place for a cell that has none (an error cell). */
export const NO_FIGURE = '–';
/** A per-cell figure, or NO_FIGURE for an error cell. */
type Figure = number | typeof NO_FIGURE;

export interface SummaryRow {
  scenario: string;
  strategy: string;
  turns: Figure;
  contextTotal: Figure;
  contextMean: Figure;
  contextMax: Figure;
  maintenance: Figure;
  recall: string;
  answerRecall: string;
  evidence: string;
  stale: string;
  conflict: string;
  answer: string;
  loadP50: string;
  saveP50: string;
  /** Model calls answered from the response cache (live runs). */
  cached: Figure;
  /** Steps the strategy refused (a `remember` over its size budget, an unsafe name). */
  refused: Figure;
  status: string;
}

/** `0.75 (6/8)`, or `–` when no probe counts. */
export function formatRate(rate: Rate): string {
  if (rate.value === null) return '–';
  return `${rate.value.toFixed(2)} (${rate.hits}/${rate.n})`;
}

/** `0.83 (n=6)`, or `–` when no probe counts. */
export function formatMean(mean: Mean): string {
  return mean.mean === null ? '–' : `${mean.mean.toFixed(2)} (n=${mean.n})`;
}

/** One recall figure of a summary, as every table shows it: title, text and the number to sort by. */
export interface RecallColumn {
  title: string;
  text: string;
  sort: number | null;
}

/** The recall figures of a summary in the order every breakdown table shows them. */
export function recallColumns(summary: RecallSummary): RecallColumn[] {
  const rate = (title: string, value: Rate): RecallColumn => ({ title, text: formatRate(value), sort: value.value });
  const mean = (title: string, value: Mean): RecallColumn => ({ title, text: formatMean(value), sort: value.mean });
  return [
    rate('context recall', summary.contextRecall),
    mean('answer recall', summary.answerRecall),
    mean('evidence recall', summary.evidenceRecall),
    rate('stale exposure', summary.staleExposure),
    rate('conflict exposure', summary.conflictExposure),
    rate('answer acc', summary.answerAccuracy),
    rate('abstained', summary.abstention),
    ...(summary.answerF1.n > 0 ? [mean('answer F1', summary.answerF1)] : []),
  ];
}

/** A cell's recall broken down by membench's probe categories, then by the dataset's own labels. */
export function breakdowns(cell: OkCell): { by: 'category' | 'label'; name: string; summary: RecallSummary }[] {
  return [
    ...Object.entries(cell.recallByCategory).map(([name, summary]) => ({
      by: 'category' as const,
      name,
      summary: summary!,
    })),
    ...Object.entries(cell.recallByLabel ?? {}).map(([name, summary]) => ({ by: 'label' as const, name, summary })),
  ];
}

export function formatMs(ms: number): string {
  return ms >= 100 ? ms.toFixed(0) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3);
}

/**
 * The cell's setting with what sets it apart from its scenario's other cells of that setting:
 * `no-keys` for the run without idempotency keys (read from the id, so an errored cell is marked too).
 */
export function cellLabel(cell: CellResult): string {
  return /\/no-keys(?:\/t\d+)?$/u.test(cell.id) ? `${cell.setting} no-keys` : cell.setting;
}

/** Refused steps of a cell: the recorded count, or (older results) the turns marked refused. */
export function refusedSteps(cell: OkCell): number {
  return cell.refusedSteps ?? cell.turns.filter((turn) => turn.refused !== undefined).length;
}

/** A cell's row of the per-cell tables: its figures, or for an error cell NO_FIGURE and its error. */
export function summaryRow(cell: CellResult): SummaryRow {
  return cell.status === 'ok' ? figuresRow(cell) : errorRow(cell);
}

/** `MESSAGE (in PHASE)`: how every report tells an error cell's error. */
export function errorText(cell: ErrorCell): string {
  return `${cell.error}${cell.phase !== undefined ? ` (in ${cell.phase})` : ''}`;
}

/** `error: MESSAGE (in PHASE)`: an error cell's status in the per-cell tables. */
export function errorStatus(cell: ErrorCell): string {
  return `error: ${errorText(cell)}`;
}

function errorRow(cell: ErrorCell): SummaryRow {
  return {
    scenario: cell.scenario,
    strategy: cellLabel(cell),
    turns: NO_FIGURE,
    contextTotal: NO_FIGURE,
    contextMean: NO_FIGURE,
    contextMax: NO_FIGURE,
    maintenance: NO_FIGURE,
    recall: NO_FIGURE,
    answerRecall: NO_FIGURE,
    evidence: NO_FIGURE,
    stale: NO_FIGURE,
    conflict: NO_FIGURE,
    answer: NO_FIGURE,
    loadP50: NO_FIGURE,
    saveP50: NO_FIGURE,
    cached: NO_FIGURE,
    refused: NO_FIGURE,
    status: errorStatus(cell),
  };
}

function figuresRow(cell: OkCell): SummaryRow {
  return {
    scenario: cell.scenario,
    strategy: `${cellLabel(cell)}${cell.interleaved ? ' ≈' : ''}`,
    turns: cell.turns.filter((turn) => turn.contextTokens !== null).length,
    contextTotal: cell.tokens.contextTotal,
    contextMean: Math.round(cell.tokens.contextMeanPerTurn),
    contextMax: cell.tokens.contextMax,
    maintenance: cell.tokens.maintenance,
    recall: formatRate(cell.recall.contextRecall),
    answerRecall: formatMean(cell.recall.answerRecall),
    evidence: formatMean(cell.recall.evidenceRecall),
    stale: formatRate(cell.recall.staleExposure),
    conflict: formatRate(cell.recall.conflictExposure),
    answer: formatRate(cell.recall.answerAccuracy),
    loadP50: formatMs(cell.latency.loadMs.p50),
    saveP50: formatMs(cell.latency.saveMs.p50),
    cached: cell.usage.cachedCalls,
    refused: refusedSteps(cell),
    status: 'ok',
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
  ['answerRecall', 'answer recall'],
  ['evidence', 'evidence recall'],
  ['stale', 'stale exposure'],
  ['conflict', 'conflict exposure'],
  ['answer', 'answer acc'],
  ['loadP50', 'load p50 ms'],
  ['saveP50', 'save p50 ms'],
  ['status', 'status'],
];

/**
 * The summary columns of a run: SUMMARY_COLUMNS, with `cache hits` when a live model ran or
 * anything came from the cache, and `refused` when a strategy refused a step (before `status`).
 */
export function summaryColumns(result: RunResult): readonly [keyof SummaryRow, string][] {
  const ok = okCells(result.cells);
  const extra: [keyof SummaryRow, string][] = [
    ...(!result.header.offlineModel || ok.some((cell) => cell.usage.cachedCalls > 0)
      ? [['cached', 'cache hits'] as [keyof SummaryRow, string]]
      : []),
    ...(ok.some((cell) => refusedSteps(cell) > 0) ? [['refused', 'refused steps'] as [keyof SummaryRow, string]] : []),
  ];
  return [...SUMMARY_COLUMNS.slice(0, -1), ...extra, ...SUMMARY_COLUMNS.slice(-1)];
}

/**
 * Lines under a summary: model calls answered from the response cache, each cell whose strategy
 * refused steps (with the first reason), and stored items a strategy could not read, so none
 * of them hides in results.json.
 */
export function summaryNotes(result: RunResult): string[] {
  const { ok, errors } = cellsByStatus(result.cells);
  const cached = ok.reduce((sum, cell) => sum + cell.usage.cachedCalls, 0);
  const notes =
    cached > 0 || !result.header.offlineModel
      ? [
          `cache hits: ${cached} model call(s) answered from the response cache (their latency is left out of latency figures; their tokens are counted)`,
        ]
      : [];
  const truncated = ok.reduce((sum, cell) => sum + (cell.usage.truncatedAnswers ?? 0), 0);
  if (truncated > 0)
    notes.push(
      `truncated: ${truncated} model answer(s) longer than ${MAX_ANSWER_CHARS} characters were cut there (see docs/failing-loudly.md)`,
    );
  const empty = ok.filter((cell) => (cell.usage.emptyAnswers ?? 0) > 0);
  if (empty.length > 0) notes.push(`empty: ${emptyAnswersNote(empty)}`);
  const cut = ok.filter((cell) => (cell.usage.cutAnswers ?? 0) > 0);
  if (cut.length > 0)
    notes.push(
      `cut: ${cutAnswersWords(cut.reduce((sum, cell) => sum + (cell.usage.cutAnswers ?? 0), 0))}: ${countedCells(cut, (cell) => cell.usage.cutAnswers ?? 0)}`,
    );
  const peers = peerNote([...new Set(result.cells.map((cell) => cell.strategy))]);
  if (peers) notes.push(peers);
  for (const cell of ok) {
    const refused = refusedSteps(cell);
    const first = cell.turns.find((turn) => turn.refused !== undefined)?.refused;
    if (refused > 0)
      notes.push(
        `refused: ${cell.id}: the strategy refused ${refused} step(s), never acknowledged${first ? ` (first: ${first})` : ''}`,
      );
    if (cell.unreadable?.length)
      notes.push(
        `unreadable: ${cell.id}: the strategy could not read ${cell.unreadable.length} stored item(s) and left them out: ${cell.unreadable.join('; ')}`,
      );
  }
  for (const cell of errors)
    if (cell.unreadable?.length)
      notes.push(
        `unreadable: ${cell.id}: the strategy could not read ${cell.unreadable.length} stored item(s) and left them out: ${cell.unreadable.join('; ')}`,
      );
  return notes;
}

/** The cells whose model answers came back with no text, and how many: scored as empty, said here. */
function emptyAnswersNote(cells: readonly OkCell[]): string {
  const total = cells.reduce((sum, cell) => sum + (cell.usage.emptyAnswers ?? 0), 0);
  const named = countedCells(cells, (cell) => cell.usage.emptyAnswers ?? 0);
  return `${total} model answer(s) came back with no text (content null or ""), scored as empty answers: ${named} (see docs/failing-loudly.md)`;
}

/** The first three cells with their count, and how many more. */
function countedCells(cells: readonly OkCell[], count: (cell: OkCell) => number): string {
  return (
    cells
      .slice(0, 3)
      .map((cell) => `${cell.id} (${count(cell)})`)
      .join(', ') + (cells.length > 3 ? `, ... (${counted(cells.length - 3, 'more cells')})` : '')
  );
}

/** The line that says where answers came from, so offline scores are never mistaken for a live model's; and what ranking-only cells left out. */
export function modelNote(result: RunResult): string {
  const source = result.header.offlineModel
    ? 'Answers and summaries come from the offline reference model (deterministic, no LLM): answer accuracy measures the memory plus this stand-in, not GPT.'
    : `Answers come from ${result.header.model}.`;
  const rankingOnly = rankingOnlyNote(result.cells);
  // A run whose every cell ranked only asked no model anything: where answers come from is moot.
  if (rankingOnly !== undefined && askedNoModel(result)) return rankingOnly;
  return rankingOnly === undefined ? source : `${rankingOnly} ${source}`;
}

/** Every cell ranked only, answering nothing: the run asked no model anything. */
function askedNoModel(result: RunResult): boolean {
  return result.cells.every((cell) => cell.status === 'ok' && cell.skipped?.includes('answers'));
}

/** What the run's ranking-only cells (`--protocol` with a retrieving strategy) did not do, in words; undefined when none. */
export function rankingOnlyNote(cells: readonly CellResult[]): string | undefined {
  const ranking = okCells(cells).filter((cell) => cell.skipped?.length);
  if (ranking.length === 0) return undefined;
  const skipped = [...new Set(ranking.flatMap((cell) => cell.skipped ?? []))].map((work) => SKIPPED_WORK[work]);
  const which = ranking.length === cells.length ? 'Every cell' : `${ranking.length} of ${cells.length} cells`;
  return `${which} ranked only (a --protocol run of strategies that rank; --protocol-full runs them whole): ${skipped.join('; ')}.`;
}

/**
 * The line that says which figures a model can change and which it cannot, naming this run's
 * strategies by what their definitions declare (results.json's `traits`): those that keep messages
 * verbatim score recall without the model; the others (or those declaring nothing) keep what a model wrote.
 */
export function modelDependenceNote(result: RunResult): string {
  // Nothing else was measured (rankingOnlyNote says what was skipped): the figures are the rankings'.
  if (result.cells.length > 0 && askedNoModel(result))
    return 'Model-independent: every figure of this run, the rankings and the retrieval figures computed from them (no language model was asked anything; a vector ranking depends on its embedder).';
  const names = [
    ...new Map(
      result.header.strategies.map((strategy) => [strategy.name, strategy.traits?.keepsVerbatim === true]),
    ).entries(),
  ];
  const verbatim = names.filter(([, keeps]) => keeps).map(([name]) => name);
  const others = names.filter(([, keeps]) => !keeps).map(([name]) => name);
  // One strategy is "it keeps", several "they keep".
  const keep = (count: number): string => (count === 1 ? 'it keeps' : 'they keep');
  const keeps = (count: number): string => (count === 1 ? 'keeps, hence its' : 'keep, hence their');
  return (
    `Model-independent: tokens, latency, durability${verbatim.length ? `, and the context, answer and evidence recall of ${verbatim.join(', ')} (${keep(verbatim.length)} messages verbatim)` : ''}. ` +
    `Model-dependent: answers (accuracy, F1, abstention)${others.length ? ` and what ${others.join(', ')} ${keeps(others.length)} recall` : ''}.`
  );
}

/**
 * Text from a run (a group, setting or probe label, a strategy's message) on one line of report.md
 * as Markdown shows it: each line break (CR, LF or CRLF, all of which end a Markdown line) a space,
 * any other control character as its `\uXXXX` escape (visibleControls: an ESC from a dataset's id
 * would recolour the terminal that prints the file), and a `<` that would open an HTML tag (a group
 * named `<img …>`) written as `&lt;`; `p<0.001` stays as it is. Markdown the text means (backticks) is kept.
 */
export const markdownLine = (text: string): string => oneLine(text).replace(/<(?=[A-Za-z/!?])/gu, '&lt;');

/**
 * Text as a Markdown code span on one line (line breaks as spaces, other control characters as
 * escapes, as markdownLine): fenced by one backtick more than the longest run of backticks inside it
 * (a setting whose knob's value holds one), padded when it starts or ends with one.
 */
export function markdownCode(text: string): string {
  const line = oneLine(text);
  const fence = '`'.repeat(Math.max(0, ...(line.match(/`+/gu) ?? []).map((run) => run.length)) + 1);
  const pad = line.startsWith('`') || line.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${line}${pad}${fence}`;
}

/** A table cell's text as Markdown shows it: one line (markdownLine), `|` escaped. */
const escapeCell = (text: string): string => markdownLine(text).replace(/\|/gu, '\\|');

/** A GitHub-flavoured Markdown table (report.md and the GitHub step summaries). */
export function markdownTable(head: readonly string[], rows: readonly (readonly string[])[]): string {
  return [
    `| ${head.map(escapeCell).join(' | ')} |`,
    `| ${head.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${row.map(escapeCell).join(' | ')} |`),
  ].join('\n');
}

/**
 * The line under tables holding interleaved cells (≈): which figures depend on how concurrent
 * sessions interleaved, with their spread over the run's trials; undefined without such cells.
 */
export function interleavingNote(result: RunResult): string | undefined {
  const cells = okCells(result.cells).filter((cell) => cell.interleaved);
  if (cells.length === 0) return undefined;
  const groups = new Map<string, OkCell[]>();
  for (const cell of cells) {
    const key = `${cell.scenario}/${cell.setting}`;
    groups.set(key, [...(groups.get(key) ?? []), cell]);
  }
  const spreads = [...groups]
    .filter(([, group]) => group.length > 1)
    .map(([key, group]) => {
      const tokens = group.map((cell) => cell.tokens.contextTotal);
      const recall = group.map((cell) => cell.recall.contextRecall.value ?? 0);
      return `${key}: ctx tokens ${Math.min(...tokens)}–${Math.max(...tokens)}, recall ${Math.min(...recall).toFixed(2)}–${Math.max(...recall).toFixed(2)}`;
    });
  return (
    '≈ ran concurrent sessions: tokens, latency and recall depend on how the sessions interleaved (outside the same-seed promise; durability counts are not). ' +
    (spreads.length
      ? `Spread over ${result.header.trials} trials: ${spreads.join('; ')}.`
      : 'Run with --trials N to see their spread.')
  );
}
