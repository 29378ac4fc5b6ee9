/** `membench explain`: answers from a run's own figures, both languages, citing each figure; unmeasured questions say so. */
import { describe, expect, it } from 'vitest';
import { explainRun, renderExplainMarkdown } from '../../reports/explain.js';
import { leaderboard } from '../../harness/results/leaderboard.js';
import { smallRun } from './fixture.js';
import type { RunResult } from '../../harness/results/schema.js';

describe('explain', () => {
  const result = smallRun();

  it('answers the five questions in English and Chinese', () => {
    for (const lang of ['en', 'zh'] as const) {
      const answers = explainRun(result, lang);
      expect(answers.map((answer) => answer.id)).toEqual([
        'window-k',
        'summary-loses',
        'vector-vs-rag',
        'files-or-database',
        'sync-or-async',
      ]);
      expect(answers.every((answer) => answer.sentences.length > 0)).toBe(true);
    }
    expect(explainRun(result, 'zh')[0]!.question).toBe('窗口记忆的 K 该怎么选？');
  });

  it("uses the run's figures and cites them", () => {
    const window = leaderboard(result.cells, result.header.seed).rows.find((row) => row.setting === 'window(k=2)')!;
    const first = explainRun(result, 'en')[0]!.sentences.find((sentence) => sentence.startsWith('window(k=2)'))!;
    expect(first).toContain(`window(k=2) recalls ${window.contextRecall.value!.toFixed(2)}`);
    expect(first).toMatch(/\[leaderboard, n=\d+\]/u);
    expect(first).toMatch(/\[recall by distance; K=2\]/u);
    const zh = explainRun(result, 'zh')[0]!.sentences.find((sentence) => sentence.startsWith('window(k=2)'))!;
    expect(zh).toContain(`召回率为 ${window.contextRecall.value!.toFixed(2)}`);
  });

  it('gives no token cost where the cells recorded no context tokens (ranking-only --protocol cells)', () => {
    const unpriced = {
      ...result,
      cells: result.cells.map((cell) => ({
        ...cell,
        turns: cell.turns.map((turn) => ({ ...turn, contextTokens: null })),
      })),
    };
    const first = explainRun(unpriced, 'en')[0]!.sentences.find((sentence) => sentence.startsWith('window(k=2)'))!;
    expect(first).toContain('at – context tokens per turn');
  });

  it('picks the cells a question is about by the traits in the header, not by strategy name', () => {
    const renamed = structuredClone(result);
    for (const spec of renamed.header.strategies) if (spec.name === 'window') spec.name = 'my-window';
    for (const cell of renamed.cells) if (cell.strategy === 'window') cell.strategy = 'my-window';
    expect(explainRun(renamed, 'en')[0]!.sentences.some((sentence) => sentence.startsWith('window(k=2) recalls'))).toBe(
      true,
    );
    const untyped = structuredClone(result);
    for (const spec of untyped.header.strategies) delete spec.traits;
    expect(explainRun(untyped, 'en')[0]!.sentences[0]).toMatch(/^This run has no window cells/u);
  });

  it('says that the cells a question needs all failed, not that the run has none', () => {
    const failed: RunResult = structuredClone(result);
    failed.cells = failed.cells.map((cell) =>
      cell.strategy === 'window'
        ? {
            id: cell.id,
            scenario: cell.scenario,
            strategy: cell.strategy,
            setting: cell.setting,
            options: cell.options,
            durability: cell.durability,
            trial: cell.trial,
            seed: cell.seed,
            status: 'error' as const,
            error: 'disk on fire',
            durationMs: 1,
          }
        : cell,
    );
    const count = failed.cells.filter((cell) => cell.strategy === 'window').length;
    const first = failed.cells.find((cell) => cell.strategy === 'window')!.id;
    expect(explainRun(failed, 'en')[0]!.sentences).toEqual([
      `This run's window cells all failed (${count} in error; ${first}: disk on fire), so it has no figures to answer with: rerun them with \`membench run --resume DIR\`.`,
    ]);
    expect(explainRun(failed, 'zh')[0]!.sentences[0]).toMatch(/^本次运行的 window 单元全部失败（\d+ 个出错；/u);
  });

  it('says what the run did not measure instead of guessing', () => {
    const answers = explainRun(result, 'en');
    // The fixture holds buffer and window only, and no crash cells.
    expect(answers.find((answer) => answer.id === 'summary-loses')!.sentences).toEqual([
      'This run has no summary cells: run `-s summary -s summary-buffer` to answer it.',
    ]);
    expect(answers.find((answer) => answer.id === 'sync-or-async')!.sentences[0]).toMatch(
      /priced fewer than two durability modes/u,
    );
    expect(renderExplainMarkdown(result)).toContain('offline reference model');
  });

  it('says a gap of files against a store as fewer or more, never as a negative cost', () => {
    // The fixture's window, read as memory files, against its buffer read as a SQLite retriever.
    const run = structuredClone(result);
    for (const spec of run.header.strategies) {
      const base = { keepsVerbatim: true, callsModelEveryTurn: false };
      if (spec.name === 'window') spec.traits = { ...base, kind: 'extraction', storage: 'files' };
      if (spec.name === 'buffer') spec.traits = { ...base, kind: 'retrieval', storage: 'sqlite', ranks: 'terms' };
    }
    const rows = leaderboard(run.cells, run.header.seed).rows;
    const files = rows.find((row) => row.strategy === 'window')!;
    const store = rows.find((row) => row.strategy === 'buffer')!;
    const gap = Math.round(store.contextPerTurn - files.contextPerTurn);
    expect(gap).toBeGreaterThan(0);
    const said = (lang: 'en' | 'zh') =>
      explainRun(run, lang)
        .find((answer) => answer.id === 'files-or-database')!
        .sentences.at(-1)!;
    expect(said('en')).toContain(`files take ${gap} fewer tokens per turn than ${store.setting}`);
    expect(said('zh')).toContain(`每轮少 ${gap} 个 token`);
    expect(`${said('en')} ${said('zh')}`).not.toMatch(/-\d/u);
  });
});
