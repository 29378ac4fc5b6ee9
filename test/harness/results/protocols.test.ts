/**
 * LongMemEval's retrieval protocol as its own code computes it (xiaowu0162/LongMemEval,
 * src/retrieval/eval_utils.py and run_retrieval.py), pinned on hand-computed rankings; then a
 * `--protocol longmemeval` run on a synthetic LongMemEval-format file.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { locomoFigures, withProtocol } from '../../../harness/results/protocols.js';
import { idsOfOpaque, opaqueMessageId } from '../../../harness/scenarios/step-ids.js';
import type { Step } from '../../../harness/scenarios/format.js';
import { runBenchmark } from '../../../harness/run/runner.js';
import { importDataset } from '../../../harness/scenarios/importers/index.js';
import { syntheticLongMemEval } from '../../../harness/bench/synthetic-longmemeval.js';
import { poolSummaries } from '../../../harness/results/retrieval.js';
import { allOk } from '../../helpers/cells.js';
import { tempDir } from '../../helpers/temp-dir.js';

/** Three sessions of two exchanges each; session B's user turn b0 and session C's reply c1r hold the answer. */
const steps = [
  { kind: 'session', session: 'new' },
  { kind: 'user', id: 'a0', replyId: 'a0r', user: 'hello', assistant: 'hi' },
  { kind: 'user', id: 'a1', user: 'weather?' },
  { kind: 'session', session: 'new' },
  { kind: 'user', id: 'b0', replyId: 'b0r', user: 'I bought a kayak', assistant: 'nice' },
  { kind: 'user', id: 'b1', user: 'thanks' },
  { kind: 'session', session: 'new' },
  { kind: 'user', id: 'c0', replyId: 'c1r', user: 'remind me', assistant: 'you bought a kayak' },
  { kind: 'assistant', id: 'c2', assistant: 'anything else?' },
  {
    kind: 'probe',
    probe: 'What did I buy?',
    expect: ['kayak'],
    forbid: [],
    category: 'extraction',
    evidence: ['b0', 'c1r'],
  },
  { kind: 'probe', probe: 'Assistant said?', expect: ['kayak'], forbid: [], category: 'extraction', evidence: ['c1r'] },
  { kind: 'probe', probe: 'Unknown?', forbid: [], category: 'abstention', evidence: [] },
] as unknown as Step[];

const at = (figures: { k: number; recallAny: number; recallAll: number; ndcg: number }[], k: number) =>
  figures.find((item) => item.k === k)!;

describe('the LongMemEval protocol', () => {
  // The strategy ranked (mapped to message ids): c2 (assistant only: not in the corpus), a1, b1, b0, a0, c0.
  const ranking = [['c2'], ['a1'], ['b1'], ['b0', 'b0r'], ['a0', 'a0r'], ['c0', 'c1r']];
  const [user, assistantOnly, abstention] = withProtocol(
    [9, 10, 11].map((step) => ({
      step,
      category: (step === 11 ? 'abstention' : 'extraction') as 'extraction' | 'abstention',
      retrieved: ranking,
    })),
    { steps },
    'longmemeval',
  );

  it('ranks user turns only; gold is the has_answer user turns; NDCG with the first rank undiscounted', () => {
    const turn = user!.protocolRetrieval!.turn;
    // Corpus ranking: a1, b1, b0, a0, c0; gold {b0} at rank 3.
    expect(at(turn, 1)).toEqual({ k: 1, recallAny: 0, recallAll: 0, ndcg: 0 });
    expect(at(turn, 3)).toMatchObject({ recallAny: 1, recallAll: 1 });
    expect(at(turn, 3).ndcg).toBeCloseTo(1 / Math.log2(3), 10);
    expect(turn.map(({ k }) => k)).toEqual([1, 3, 5, 10, 30, 50]);
  });

  it('turn→session as evaluate_retrieval_turn2session: only the has_answer turns find their session and are relevant in NDCG', () => {
    const session = user!.protocolRetrieval!.session!;
    // run_retrieval.py's corpus ids: a1 → A, b1 → noans B (B's turn without has_answer), b0 → B, a0 → A, c0 → C.
    // k=1: cutoff 1 (A): miss.
    expect(at(session, 1)).toEqual({ k: 1, recallAny: 0, recallAll: 0, ndcg: 0 });
    // k=3: A, noans B, B are three distinct sessions: cutoff 3. Gold B found at rank 3; relevances
    // 0, 0, 1 (b1 is not relevant) against the one has_answer turn: NDCG 1 / log2 3.
    // (Counting every user turn of B relevant, as membench did, gave (1 + 1/log2 3) / 2 at cutoff 5.)
    expect(at(session, 3)).toMatchObject({ recallAny: 1, recallAll: 1 });
    expect(at(session, 3).ndcg).toBeCloseTo(1 / Math.log2(3), 10);
    // k=5: only four distinct sessions (A, noans B, B, C): the cutoff runs past the ranking, the same figures.
    expect(at(session, 5)).toMatchObject({ recallAny: 1, recallAll: 1 });
    expect(at(session, 5).ndcg).toBeCloseTo(1 / Math.log2(3), 10);
  });

  it("an answer session's turn without has_answer is a pseudo-session: it finds nothing and takes a place among the k distinct sessions", () => {
    // b1 first: under membench's former rule its session B was found at k=1.
    const [probe] = withProtocol(
      [{ step: 9, category: 'extraction' as const, retrieved: [['b1'], ['a1'], ['b0'], ['a0'], ['c0']] }],
      { steps },
      'longmemeval',
    );
    const session = probe!.protocolRetrieval!.session!;
    // Corpus ids noans B, A, B, A, C. k=1: noans B is no gold.
    expect(at(session, 1)).toEqual({ k: 1, recallAny: 0, recallAll: 0, ndcg: 0 });
    // k=3: noans B, A, B: cutoff 3 (the former rule widened to 5: B, A, B, A, C); b0 at rank 3 the only relevant turn.
    expect(at(session, 3)).toMatchObject({ recallAny: 1, recallAll: 1 });
    expect(at(session, 3).ndcg).toBeCloseTo(1 / Math.log2(3), 10);
  });

  it('the widened cutoff reaches a session ranked after two turns of another', () => {
    const cited = [
      ...steps.slice(0, 9),
      { kind: 'probe', probe: '?', expect: ['x'], forbid: [], category: 'extraction', evidence: ['c0'] },
    ] as unknown as Step[];
    const [probe] = withProtocol(
      [{ step: 9, category: 'extraction' as const, retrieved: [['a1'], ['a0'], ['b1'], ['b0'], ['c0']] }],
      { steps: cited },
      'longmemeval',
    );
    // Sessions A, A, B, B, C: three distinct sessions need the top 5, which holds c0's session.
    expect(at(probe!.protocolRetrieval!.session!, 3)).toMatchObject({ recallAny: 1, recallAll: 1 });
    expect(at(probe!.protocolRetrieval!.session!, 3).ndcg).toBeCloseTo(1 / Math.log2(5), 10);
    expect(at(probe!.protocolRetrieval!.turn, 3)).toMatchObject({ recallAny: 0 });
  });

  it('two gold sessions: recall_all needs both, recall_any one; the ideal NDCG holds both has_answer turns', () => {
    const cited = [
      ...steps.slice(0, 9),
      { kind: 'probe', probe: '?', expect: ['x'], forbid: [], category: 'extraction', evidence: ['a0', 'b0'] },
    ] as unknown as Step[];
    const [probe] = withProtocol(
      [{ step: 9, category: 'extraction' as const, retrieved: [['a1'], ['b1'], ['b0'], ['a0'], ['c0']] }],
      { steps: cited },
      'longmemeval',
    );
    const { turn, session } = probe!.protocolRetrieval!;
    // Turns a1, b1, b0, a0, c0; gold a0 and b0. k=3: b0 alone.
    expect(at(turn, 3)).toMatchObject({ recallAny: 1, recallAll: 0 });
    expect(at(turn, 3).ndcg).toBeCloseTo(1 / Math.log2(3) / 2, 10);
    expect(at(turn, 5)).toMatchObject({ recallAny: 1, recallAll: 1 });
    expect(at(turn, 5).ndcg).toBeCloseTo((1 / Math.log2(3) + 1 / Math.log2(4)) / 2, 10);
    // Sessions noans A, noans B, B, A, C. k=3: cutoff 3, B found and A not.
    expect(at(session!, 3)).toMatchObject({ recallAny: 1, recallAll: 0 });
    expect(at(session!, 3).ndcg).toBeCloseTo(1 / Math.log2(3) / 2, 10);
    expect(at(session!, 5)).toMatchObject({ recallAny: 1, recallAll: 1 });
    // Session documents B, C, A: at 1 only B.
    const [documents] = withProtocol(
      [
        {
          step: 9,
          category: 'extraction' as const,
          retrieved: [
            ['b0', 'b0r', 'b1'],
            ['c0', 'c1r', 'c2'],
            ['a0', 'a0r', 'a1'],
          ],
        },
      ],
      { steps: cited },
      'longmemeval',
      'session',
    );
    expect(at(documents!.protocolRetrieval!.session!, 1)).toEqual({ k: 1, recallAny: 1, recallAll: 0, ndcg: 1 });
    expect(at(documents!.protocolRetrieval!.session!, 3)).toMatchObject({ recallAny: 1, recallAll: 1 });
  });

  it('a question with no has_answer user turn scores recall_any 0, recall_all 1, NDCG 0 as the paper scores it, marked noTarget; abstention is left out', () => {
    const figures = assistantOnly!.protocolRetrieval!;
    expect(figures.noTarget).toBe(true);
    for (const level of [figures.turn, figures.session!]) {
      expect(level.map(({ k }) => k)).toEqual([1, 3, 5, 10, 30, 50]);
      for (const item of level) expect(item).toEqual({ k: item.k, recallAny: 0, recallAll: 1, ndcg: 0 });
    }
    expect(user!.protocolRetrieval!.noTarget).toBeUndefined();
    expect(abstention!.protocolRetrieval).toBeUndefined();
  });

  it("`--protocol longmemeval` indexes user turns, ranks to the paper's k and scores the non-abstention questions", async () => {
    const dir = await tempDir('membench-protocol-');
    const file = path.join(dir, 'longmemeval-synthetic.json');
    const questions = [
      ...syntheticLongMemEval({ questions: 10, sessions: [6, 6], messages: [6, 6], replySentences: [3, 6] }),
    ] as { question_id: string; question_type: string }[];
    await writeFile(file, JSON.stringify(questions));
    const result = allOk(
      await runBenchmark({
        datasets: [`longmemeval:${file}`],
        strategies: ['bm25', 'window'],
        protocol: 'longmemeval',
      }),
    );
    const bm25 = result.cells.filter((cell) => cell.strategy === 'bm25');
    expect(bm25.every((cell) => cell.options.index === 'user')).toBe(true);
    expect(
      result.cells.filter((cell) => cell.strategy === 'window').every((cell) => cell.protocolRetrieval === undefined),
    ).toBe(true);
    // Both units and both rankers run: one cell per question for each.
    const turns = bm25.filter((cell) => cell.options.unit === 'turn' && cell.options.ranker === 'fts5');
    const sessions = bm25.filter((cell) => cell.options.unit === 'session' && cell.options.ranker === 'fts5');
    expect([turns.length, sessions.length]).toEqual([10, 10]);
    const paper = bm25.filter((cell) => cell.options.ranker === 'okapi-paper');
    expect(paper.map((cell) => cell.setting).sort()).toEqual([
      ...Array(10).fill('bm25(index=user,unit=session,ranker=okapi-paper)'),
      ...Array(10).fill('bm25(index=user,unit=turn,ranker=okapi-paper)'),
    ]);
    // The paper's ranker ranks every session, those holding no query term too.
    const paperSessions = paper.filter((cell) => cell.options.unit === 'session');
    expect(paperSessions.every((cell) => cell.probes.every((probe) => probe.retrieved?.length === 6))).toBe(true);
    // Abstention questions and those whose evidence is an assistant turn are left out.
    const scored = questions.filter(
      (question) => !question.question_id.endsWith('_abs') && question.question_type !== 'single-session-assistant',
    );
    expect(scored.length).toBeGreaterThan(0);
    expect(scored.length).toBeLessThan(questions.length);
    expect(turns.reduce((sum, cell) => sum + (cell.protocolRetrieval?.summary?.turn.n ?? 0), 0)).toBe(scored.length);
    expect(sessions.reduce((sum, cell) => sum + (cell.protocolRetrieval?.summary?.session?.n ?? 0), 0)).toBe(
      scored.length,
    );
    const scoredCell = turns.find((cell) => cell.protocolRetrieval?.summary)!;
    expect(scoredCell.protocolRetrieval!.summary!.session!.atK.map(({ k }) => k)).toEqual([1, 3, 5, 10, 30, 50]);
    // print_retrieval_metrics.py's averaging: every non-abstention question, the ones without a
    // has_answer user turn at recall_any 0, recall_all 1, NDCG 0.
    const nonAbstention = questions.filter((question) => !question.question_id.endsWith('_abs')).length;
    const noTarget = nonAbstention - scored.length;
    expect(noTarget).toBeGreaterThan(0);
    for (const cells of [turns, sessions]) {
      const scoredMeans = poolSummaries(cells.flatMap((cell) => cell.protocolRetrieval?.summary ?? []))!.session!;
      const allMeans = poolSummaries(cells.flatMap((cell) => cell.protocolRetrieval?.nonAbstentionSummary ?? []))!
        .session!;
      expect(allMeans.n).toBe(nonAbstention);
      for (const [i, { k, recallAny, recallAll, ndcg }] of scoredMeans.atK.entries()) {
        expect(allMeans.atK[i]!.k).toBe(k);
        expect(allMeans.atK[i]!.recallAny).toBeCloseTo((recallAny * scored.length) / nonAbstention, 10);
        expect(allMeans.atK[i]!.recallAll).toBeCloseTo((recallAll * scored.length + noTarget) / nonAbstention, 10);
        expect(allMeans.atK[i]!.ndcg).toBeCloseTo((ndcg * scored.length) / nonAbstention, 10);
      }
    }
    // Turn unit: each ranked item is one exchange (a user turn and its reply); session unit: one
    // item per session (of the 6 holding a query term), its 3 exchanges' 6 turns; no turn table.
    expect(turns[0]!.probes[0]!.retrieved!.every((ids) => ids.length === 2)).toBe(true);
    const ranked = sessions[0]!.probes[0]!.retrieved!;
    expect(ranked.length).toBeGreaterThan(0);
    expect(ranked.length).toBeLessThanOrEqual(6);
    expect(ranked.every((ids) => ids.length === 6)).toBe(true);
    expect(sessions.find((cell) => cell.protocolRetrieval?.summary)!.protocolRetrieval!.summary!.turn.atK).toEqual([]);
  });

  it("session unit: each ranked item is a session document, scored on that ranking (the paper's --granularity session)", () => {
    // Session documents ranked C, A, B (each item holds its session's message ids).
    const [probe] = withProtocol(
      [
        {
          step: 9,
          category: 'extraction' as const,
          retrieved: [
            ['c0', 'c1r', 'c2'],
            ['a0', 'a0r', 'a1'],
            ['b0', 'b0r', 'b1'],
          ],
        },
      ],
      { steps },
      'longmemeval',
      'session',
    );
    const figures = probe!.protocolRetrieval!;
    expect(figures.turn).toEqual([]);
    // Gold: session B alone (c1r is an assistant turn), at rank 3; one relevant document.
    expect(at(figures.session!, 1)).toEqual({ k: 1, recallAny: 0, recallAll: 0, ndcg: 0 });
    expect(at(figures.session!, 3)).toMatchObject({ recallAny: 1, recallAll: 1 });
    expect(at(figures.session!, 3).ndcg).toBeCloseTo(1 / Math.log2(3), 10);
  });

  it('a turn or session ranked again (items that share exchanges, as entity summaries do) counts once, where it first comes', () => {
    const scored = (retrieved: string[][], unit: 'turn' | 'session') =>
      withProtocol([{ step: 9, category: 'extraction' as const, retrieved }], { steps }, 'longmemeval', unit)[0]!
        .protocolRetrieval!;
    // b0 (gold) three times at the top, then a1: as if ranked b0, a1.
    const repeated = scored([['b0'], ['b0', 'b0r'], ['b0r', 'b0'], ['a1']], 'turn');
    expect(repeated).toEqual(scored([['b0'], ['a1']], 'turn'));
    expect(at(repeated.turn, 3)).toEqual({ k: 3, recallAny: 1, recallAll: 1, ndcg: 1 });
    for (const atK of [...repeated.turn, ...repeated.session!]) expect(atK.ndcg).toBeLessThanOrEqual(1);
    const sessions = scored(
      [
        ['b0', 'b1'],
        ['b1', 'b0'],
        ['a0', 'a1'],
      ],
      'session',
    );
    expect(sessions).toEqual(
      scored(
        [
          ['b0', 'b1'],
          ['a0', 'a1'],
        ],
        'session',
      ),
    );
    expect(at(sessions.session!, 3).ndcg).toBe(1);
  });
});

describe('the LoCoMo protocol', () => {
  it('recall@k is the share of the evidence dia_ids among the top k items', () => {
    const ranking = [['D1:3'], ['D1:1'], ['D2:4'], ['D1:2'], ['D2:1']];
    const figures = locomoFigures(ranking, ['D1:1', 'D2:1', 'D9:9'], [1, 2, 5]);
    expect(figures.turn.map((at) => at.recall)).toEqual([0, 1 / 3, 2 / 3]);
    expect(figures.session).toBeUndefined();
  });

  it('a message id names one utterance: the user message or its reply', () => {
    const map = idsOfOpaque([
      { kind: 'user', id: 'D1:1', replyId: 'D1:2', user: 'a', assistant: 'b' },
      { kind: 'user', id: 'D1:3', user: 'c' },
    ] as unknown as Step[]);
    expect(map.get(opaqueMessageId('s0', false))).toEqual(['D1:1']);
    expect(map.get(opaqueMessageId('s0', true))).toEqual(['D1:2']);
    expect(map.get('s0')).toEqual(['D1:1', 'D1:2']);
    expect(map.get(opaqueMessageId('s1', false))).toEqual(['D1:3']);
  });

  it('`--protocol locomo` ranks one utterance per document and scores recall at 5, 10, 25, 50', async () => {
    const result = allOk(
      await runBenchmark({
        datasets: ['locomo:fixtures/datasets/synthetic/locomo-synthetic.json'],
        datasetLimit: 2,
        strategies: ['bm25', 'window'],
        protocol: 'locomo',
      }),
    );
    const dialog = result.cells.filter((cell) => cell.strategy === 'bm25' && !cell.protocolRetrieval?.documents);
    expect(dialog.map((cell) => cell.options.ranker).sort()).toEqual(['fts5', 'fts5', 'okapi-paper', 'okapi-paper']);
    const cells = dialog.filter((cell) => cell.options.ranker === 'fts5');
    expect(cells.every((cell) => cell.options.unit === 'message')).toBe(true);
    expect(
      result.cells.filter((cell) => cell.strategy === 'window').every((cell) => cell.protocolRetrieval === undefined),
    ).toBe(true);
    const summary = cells[0]!.protocolRetrieval!.summary!;
    expect(summary.turn.atK.map(({ k }) => k)).toEqual([5, 10, 25, 50]);
    expect(summary.turn.atK.every((at) => at.recall !== undefined && at.recall >= 0 && at.recall <= 1)).toBe(true);
    // Each ranked item is one utterance, named by its own dia_id.
    const probe = cells[0]!.probes.find((item) => item.protocolRetrieval)!;
    expect(probe.retrieved!.every((ids) => ids.length === 1 && /^D\d+:\d+$/u.test(ids[0]!))).toBe(true);
    const evidence = new Set(probe.protocolRetrieval && probe.retrieved ? probe.retrieved.flat() : []);
    expect(evidence.size).toBe(probe.retrieved!.length);
  });

  it('the observation and summary units rank the file’s derived documents and score them as LoCoMo’s code does', async () => {
    const result = allOk(
      await runBenchmark({
        datasets: ['locomo:fixtures/datasets/synthetic/locomo-synthetic.json'],
        datasetLimit: 1,
        strategies: ['bm25'],
        protocol: 'locomo',
      }),
    );
    const cellOf = (documents?: string) =>
      result.cells.find((cell) => cell.protocolRetrieval && cell.protocolRetrieval.documents === documents)!;
    const [dialog, observation, summary] = [cellOf(undefined), cellOf('observation'), cellOf('summary')];
    const probesOf = (cell: typeof dialog) => cell.probes.filter((probe) => probe.protocolRetrieval);
    expect(probesOf(observation).length).toBe(probesOf(dialog).length);
    expect(probesOf(summary).length).toBe(probesOf(dialog).length);
    const { scenarios } = await importDataset('locomo:fixtures/datasets/synthetic/locomo-synthetic.json', {
      limit: 1,
      documents: true,
    });
    // The probes' evidence: the dialog's dia_ids, the same in each unit's scenario.
    const evidenceOf = (cell: typeof dialog, step: number): string[] => {
      const probe = scenarios.find((scenario) => scenario.name === cell.scenario)!.steps[step];
      return probe?.kind === 'probe' ? probe.evidence : [];
    };
    const ks = [5, 10, 25, 50];
    // Observation unit: a retrieved observation stands for the dia_ids it cites (evaluate_gpts.py get_rag_context).
    for (const probe of probesOf(observation)) {
      expect(probe.retrieved!.every((ids) => /^O\d+\.\d+$/u.test(ids[0]!))).toBe(true);
      const evidence = evidenceOf(observation, probe.step);
      const expected = ks.map(
        (k) => evidence.filter((id) => probe.retrieved!.slice(0, k).flat().includes(id)).length / evidence.length,
      );
      expect(probe.protocolRetrieval!.turn.map((at) => at.recall)).toEqual(expected);
    }
    // Summary unit: evidence D3:5 is found when session 3's summary is in the top k (evaluation.py's recall_acc for "S" ids).
    let partial = 0;
    for (const probe of probesOf(summary)) {
      const evidence = evidenceOf(summary, probe.step);
      const expected = ks.map((k) => {
        const sessions = probe.retrieved!.slice(0, k).map((ids) => ids[0]!.slice(1));
        return evidence.filter((id) => sessions.includes(id.split(':')[0]!.slice(1))).length / evidence.length;
      });
      expect(probe.protocolRetrieval!.turn.map((at) => at.recall)).toEqual(expected);
      if (expected[0]! < 1) partial++;
    }
    expect(partial).toBeGreaterThan(0); // the top 5 of 12 sessions misses some evidence: the check above can fail
  });
});
