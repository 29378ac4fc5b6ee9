/** report.md: the run header, one row per cell, and recall by probe category with n. */
import type { RunResult } from '../harness/results/schema.js';
import { formatRate, markdownTable, modelNote, summaryColumns, summaryNotes, summaryRow } from './summary.js';
import { COMPRESSED_AWAY_NOTE, invariantLegend, MATRIX_COLUMNS, matrixRows, PRICE_COLUMNS, priceRows } from './durability.js';

const table = markdownTable;

function durabilitySection(result: RunResult): string[] {
  const prices = priceRows(result);
  if (prices.length === 0) return [];
  return [
    '## Durability',
    '',
    'Cells with crash points, concurrent sessions or fuzzing ran in agent processes killed with SIGKILL. ' +
      `Per strategy and durability mode: the save latency it costs and what it lost. Invariants: ✓ held, ✗ violations (${invariantLegend()}).`,
    '',
    table([...PRICE_COLUMNS], prices),
    '',
    `${COMPRESSED_AWAY_NOTE}.`,
    '',
    '### Matrix: strategy × mode × crash point',
    '',
    table([...MATRIX_COLUMNS], matrixRows(result)),
    '',
  ];
}

export function renderMarkdown(result: RunResult): string {
  const { header } = result;
  const columns = summaryColumns(result);
  const notes = summaryNotes(result);
  const lines: string[] = [
    '# membench report',
    '',
    `- membench ${header.membenchVersion}${header.gitCommit ? ` (commit ${header.gitCommit.slice(0, 12)})` : ''}, Node ${header.nodeVersion}, ${header.platform}`,
    `- model: \`${header.model}\`, embedder: \`${header.embedder}\`, tokenizer: ${header.tokenizer.encoding} (for \`${header.tokenizer.model}\`)`,
    `- seed ${header.seed}, ${header.trials} trial(s), ${result.cells.length} cells, started ${header.startedAt}`,
    `- strategies: ${header.strategies.map((strategy) => `\`${strategy.label}\``).join(', ')}`,
    `- scenarios: ${header.scenarios.map((scenario) => `\`${scenario.name}\` (${scenario.steps} steps)`).join(', ')}`,
    '',
    `> ${modelNote(result)}`,
    '',
    '## Summary',
    '',
    'Context tokens are what each strategy loaded for the model calls of the run (with chat overhead). ' +
      'Context recall: an expected string is in the loaded context. Stale exposure: a forbidden (outdated) string is there and no expected one is. ' +
      'Each rate shows hits/n.',
    '',
    table(
      columns.map(([, title]) => title),
      result.cells.map((cell) => {
        const row = summaryRow(cell);
        return columns.map(([key]) => String(row[key]));
      }),
    ),
    '',
    ...notes.map((note) => `- ${note}`),
    ...(notes.length ? [''] : []),
    '## Recall by probe category',
    '',
    table(
      ['scenario', 'strategy', 'category', 'context recall', 'stale exposure', 'answer acc'],
      result.cells.flatMap((cell) =>
        Object.entries(cell.recallByCategory).map(([category, summary]) => [
          cell.scenario,
          cell.label,
          category,
          formatRate(summary.contextRecall),
          formatRate(summary.staleExposure),
          formatRate(summary.answerAccuracy),
        ]),
      ),
    ),
    '',
    ...durabilitySection(result),
    '## Probes',
    '',
    table(
      ['scenario', 'strategy', 'step', 'category', 'question', 'in context', 'stale', 'ctx tokens', 'answer'],
      result.cells.flatMap((cell) =>
        cell.probes.map((probe) => [
          cell.scenario,
          cell.label,
          probe.id ?? String(probe.step),
          probe.category,
          probe.question,
          probe.contextRecall === undefined ? '–' : probe.contextRecall ? 'yes' : 'no',
          probe.staleExposure ? 'yes' : 'no',
          String(probe.contextTokens),
          probe.answer,
        ]),
      ),
    ),
    '',
  ];
  return lines.join('\n');
}
