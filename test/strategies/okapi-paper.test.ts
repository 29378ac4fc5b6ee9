/**
 * `bm25` with `ranker: okapi-paper`: rank_bm25 0.2.2's BM25Okapi over `str.split(" ")`, as the
 * LongMemEval paper's code ranks. Every expected score here is computed from the published
 * formula in the test itself (k1 1.5, b 0.75, ε 0.25), never from the implementation.
 */
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { planRun, runBenchmark } from '../../harness/run/runner.js';
import { bm25 } from '../../strategies/bm25.js';
import {
  descendingOrder,
  okapiDocument,
  okapiIdf,
  okapiScores,
  paperTokens,
} from '../../strategies/shared/okapi-paper.js';
import { describeConformance, strategyScratch } from './conformance.js';
import { allOk } from '../helpers/cells.js';
import { tempDir } from '../helpers/temp-dir.js';

describeConformance({ ...bm25, name: 'bm25 (ranker okapi-paper)' }, { options: { ranker: 'okapi-paper' } });

const K1 = 1.5;
const B = 0.75;
const EPSILON = 0.25;
/** idf as rank_bm25 computes it before the floor: ln(N − n + 0.5) − ln(n + 0.5). */
const rawIdf = (documents: number, holding: number): number =>
  Math.log(documents - holding + 0.5) - Math.log(holding + 0.5);
/** One term's contribution: idf × tf(k1 + 1) / (tf + k1(1 − b + b·|d|/avgdl)). */
const part = (idf: number, tf: number, length: number, averageLength: number): number =>
  (idf * (tf * (K1 + 1))) / (tf + K1 * (1 - B + (B * length) / averageLength));

const scoresOf = (texts: readonly string[], query: string): number[] =>
  okapiScores(
    texts.map((text) => okapiDocument(paperTokens(text))),
    paperTokens(query),
  );

describe('paperTokens: Python str.split(" ")', () => {
  it('splits at single spaces only, keeping empty tokens, newlines, tabs, case and punctuation', () => {
    expect(paperTokens('a  b')).toEqual(['a', '', 'b']);
    expect(paperTokens('')).toEqual(['']);
    expect(paperTokens(' x ')).toEqual(['', 'x', '']);
    expect(paperTokens('Hi,\nthere\tyou')).toEqual(['Hi,\nthere\tyou']);
  });
});

describe('okapiScores: BM25Okapi by hand', () => {
  it('scores a small corpus, a negative idf floored at ε × the mean idf, repeated query tokens counted twice', () => {
    // Corpus (N = 3): "cat sat" (2 tokens), "cat dog cat" (3), "bird" (1); avgdl = 6 / 3 = 2.
    const texts = ['cat sat', 'cat dog cat', 'bird'];
    // n(cat) = 2 > N/2: idf ln(1.5) − ln(2.5) < 0; sat, dog, bird: ln(2.5) − ln(1.5).
    const rare = rawIdf(3, 1);
    const common = rawIdf(3, 2);
    expect(common).toBeLessThan(0);
    const mean = (common + 3 * rare) / 4; // terms in first-seen order: cat, sat, dog, bird
    const floored = EPSILON * mean;
    expect(okapiIdf(texts.map((text) => okapiDocument(paperTokens(text)))).get('cat')).toBeCloseTo(floored, 12);
    const scores = scoresOf(texts, 'cat cat dog');
    const expected = [
      2 * part(floored, 1, 2, 2),
      2 * part(floored, 2, 3, 2) + part(rare, 1, 3, 2),
      0, // "bird" holds no query token: ranked all the same, with 0
    ];
    scores.forEach((score, index) => expect(score).toBeCloseTo(expected[index]!, 12));
    // The repetition counts: "cat dog" alone scores document 0 half as much.
    expect(scoresOf(texts, 'cat dog')[0]).toBeCloseTo(part(floored, 1, 2, 2), 12);
    expect(descendingOrder(scores)).toEqual([1, 0, 2]);
  });

  it('is case- and punctuation-sensitive: "Paris." is not "paris"', () => {
    // N = 2, avgdl = 1: "Paris." and "paris" are different terms, each in one document.
    const texts = ['Paris.', 'paris'];
    const idf = rawIdf(2, 1); // ln(1.5) − ln(1.5) = 0: an idf of exactly 0 is no negative idf
    expect(idf).toBe(0);
    expect(scoresOf(texts, 'paris')).toEqual([0, part(idf, 1, 1, 1)]);
    // With a third document the term is rare: only the exact token scores.
    const three = ['Paris.', 'paris', 'rome'];
    const scores = scoresOf(three, 'paris');
    expect(scores[0]).toBe(0);
    expect(scores[1]).toBeCloseTo(part(rawIdf(3, 1), 1, 1, 1), 12);
  });

  it('counts an empty document as one empty token, and a double space as an empty token too', () => {
    // Corpus: "" → [""], "a  b" → ["a", "", "b"], "c" → ["c"]; N = 3, avgdl = 5 / 3.
    const texts = ['', 'a  b', 'c'];
    // "" is in 2 of 3 documents: negative idf, floored. Terms first seen: "", a, b, c.
    const empty = rawIdf(3, 2);
    const rare = rawIdf(3, 1);
    const floored = EPSILON * ((empty + 3 * rare) / 4);
    const average = 5 / 3;
    const scores = scoresOf(texts, 'a ');
    // The query "a " is ["a", ""]: document 0 scores by its empty token alone.
    expect(scores[0]).toBeCloseTo(part(floored, 1, 1, average), 12);
    expect(scores[1]).toBeCloseTo(part(rare, 1, 3, average) + part(floored, 1, 3, average), 12);
    expect(scores[2]).toBe(0);
  });

  it('orders ties as np.argsort(scores)[::-1] with a stable sort: the later document first', () => {
    // Identical documents score the same; the no-match ones tie at 0.
    const scores = scoresOf(['x y', 'q', 'x y', 'r', 's'], 'x');
    expect(scores[0]).toBeGreaterThan(0);
    expect(scores[0]).toBe(scores[2]);
    expect(descendingOrder(scores)).toEqual([2, 0, 4, 3, 1]);
    expect(descendingOrder([0, 0, 0])).toEqual([2, 1, 0]);
    expect(descendingOrder([1, 3, 2])).toEqual([1, 2, 0]);
  });

  it('scores a query token outside the corpus as 0, and an empty corpus as no scores', () => {
    expect(scoresOf(['a b', 'c'], 'zzz')).toEqual([0, 0]);
    // A term in exactly half the documents has idf ln(2.5) − ln(2.5) = 0: no negative idf, not floored.
    expect(rawIdf(4, 2)).toBe(0);
    expect(scoresOf(['x a', 'x b', 'c', 'd'], 'x')).toEqual([0, 0, 0, 0]);
    expect(okapiScores([], ['a'])).toEqual([]);
  });
});

const scratch = strategyScratch(bm25);

describe('bm25 ranker okapi-paper as a strategy', () => {
  it('ranks every stored exchange by the paper text (no date note), zero scores included', async () => {
    const strategy = await scratch.open({ ranker: 'okapi-paper', index: 'user', recentExchanges: 0, k: 1 });
    const at = '2023-05-30T23:40:00Z';
    const say = async (turn: number, text: string): Promise<void> => {
      await strategy.save({
        message: new HumanMessage(`[30 May 2023, 23:40] ${text}`),
        turn,
        stepId: `s${turn}`,
        timestamp: at,
      });
    };
    await say(1, 'I adopted a cat');
    await say(2, 'the weather is nice');
    await say(3, 'My cat is called Tom');
    const { retrieved } = await strategy.load({ query: 'cat', turn: 4, rankDepth: 10 });
    // N = 3: "cat" in 2 documents: negative idf, floored at ε × mean idf; a date token would have
    // made "[30" and "May" common to all three and changed avgdl.
    const terms = ['I', 'adopted', 'a', 'cat', 'the', 'weather', 'is', 'nice', 'My', 'called', 'Tom'];
    const counts = new Map([
      ['cat', 2],
      ['is', 2],
    ]);
    const idfs = terms.map((term) => rawIdf(3, counts.get(term) ?? 1));
    const floored = EPSILON * (idfs.reduce((sum, value) => sum + value, 0) / idfs.length);
    const average = (4 + 4 + 5) / 3;
    expect(retrieved!.map((item) => item.stepIds)).toEqual([['s1'], ['s3'], ['s2']]);
    expect(retrieved![0]!.score).toBeCloseTo(part(floored, 1, 4, average), 12);
    expect(retrieved![1]!.score).toBeCloseTo(part(floored, 1, 5, average), 12);
    expect(retrieved![2]!.score).toBe(0);
    await strategy.close();
  });

  it("indexes a message by the text it was saved with for a paper's corpus (MemoryEvent.indexText)", async () => {
    const strategy = await scratch.open({ ranker: 'okapi-paper', unit: 'message', recentExchanges: 0 });
    await strategy.save({
      message: new HumanMessage('Ann: hello there'),
      turn: 1,
      stepId: 's1',
      indexText: 'Ann said, "hello there"',
    });
    await strategy.save({
      message: new HumanMessage('Bob: goodbye'),
      turn: 2,
      stepId: 's2',
      indexText: 'Bob said, "goodbye"',
    });
    await strategy.save({ message: new HumanMessage('Cid: said'), turn: 3, stepId: 's3' });
    // "said," (with its comma) is in the indexed texts of s1 and s2 only; "Cid:" in s3 only.
    const { retrieved } = await strategy.load({ query: 'said,', turn: 4, rankDepth: 10 });
    expect(retrieved!.map((item) => item.score > 0)).toEqual([true, true, false]);
    expect(
      (await strategy.load({ query: 'Ann:', turn: 4, rankDepth: 10 })).retrieved!.every((item) => item.score === 0),
    ).toBe(true);
    await strategy.close();
  });

  it('ranks sessions as their user turns joined by single spaces', async () => {
    const strategy = await scratch.open({ ranker: 'okapi-paper', unit: 'session', index: 'user', recentExchanges: 0 });
    const turn = async (number: number, user: string, session: number): Promise<void> => {
      await strategy.save({ message: new HumanMessage(user), turn: number, stepId: `s${number}`, session });
      await strategy.save({ message: new AIMessage('ok green'), turn: number, stepId: `s${number}`, session });
    };
    await turn(1, 'red apple', 0);
    await turn(2, 'green', 0);
    await turn(3, 'blue sky', 1);
    await turn(4, 'grey', 2);
    // Sessions: "red apple green" (3 tokens), "blue sky" (2), "grey" (1); avgdl 2. The replies are not indexed.
    const { retrieved } = await strategy.load({ query: 'green ok', turn: 5, rankDepth: 10 });
    expect(retrieved!.map((item) => item.stepIds)).toEqual([['s1', 's2'], ['s4'], ['s3']]);
    expect(retrieved![0]!.score).toBeCloseTo(part(rawIdf(3, 1), 1, 3, 2), 12);
    expect(retrieved!.slice(1).map((item) => item.score)).toEqual([0, 0]);
    await strategy.close();
  });
});

describe('okapi-paper under --protocol longmemeval', () => {
  it("ranks a LongMemEval file's sessions as the paper's code does: user turns' content as the file has it, no date, the question without its date note", async () => {
    // Three sessions, one user turn each (a reply after it, never indexed). B's content ends in a
    // space and the question holds a double space: both give the paper's tokenizer an empty token.
    const session = (user: string, hasAnswer = false) => [
      { role: 'user', content: user, has_answer: hasAnswer },
      { role: 'assistant', content: 'my my is is dog' },
    ];
    const item = {
      question_id: 'q1',
      question_type: 'single-session-user',
      question: 'what is  my dog called',
      answer: 'Rex',
      question_date: '2023/05/30 (Tue) 23:40',
      haystack_session_ids: ['s_a', 'answer_b', 's_c'],
      haystack_dates: ['2023/05/20 (Sat) 10:00', '2023/05/21 (Sun) 10:00', '2023/05/22 (Mon) 10:00'],
      haystack_sessions: [session('my dog is Rex'), session('I like my cat ', true), session('the weather is cold')],
      answer_session_ids: ['answer_b'],
    };
    const dir = await tempDir('membench-okapi-lme-');
    const file = path.join(dir, 'lme.json');
    await writeFile(file, JSON.stringify([item]));
    const result = allOk(
      await runBenchmark({
        datasets: [`longmemeval:${file}`],
        strategies: ['bm25'],
        params: ['bm25.ranker=okapi-paper', 'bm25.unit=session'],
        protocol: 'longmemeval',
      }),
    );
    expect(result.cells.map((cell) => cell.setting)).toEqual(['bm25(index=user,unit=session,ranker=okapi-paper)']);
    const probe = result.cells[0]!.probes[0]!;
    // By hand: N 3, avgdl (4 + 5 + 4) / 3; "my" and "is" are in 2 of 3 sessions (negative idf,
    // floored at ε × the mean idf of the 11 terms: my, dog, is, Rex, I, like, cat, "", the, weather, cold).
    // Query tokens: what, is, "", my, dog, called.
    const average = 13 / 3;
    const rare = rawIdf(3, 1);
    const floored = EPSILON * ((2 * rawIdf(3, 2) + 9 * rare) / 11);
    const a = part(floored, 1, 4, average) + part(floored, 1, 4, average) + part(rare, 1, 4, average);
    const b = part(rare, 1, 5, average) + part(floored, 1, 5, average);
    const c = part(floored, 1, 4, average);
    expect(a).toBeGreaterThan(b);
    expect(b).toBeGreaterThan(c);
    // Without the file's own content (trimmed) B would tie with C, and the later, C, would come first.
    expect(probe.retrieved!.map((ids) => ids[0]!.split('.')[0])).toEqual(['s_a', 'answer_b', 's_c']);
    const at = (k: number) => probe.protocolRetrieval!.session!.find((figures) => figures.k === k)!;
    expect(at(1)).toMatchObject({ recallAny: 0, recallAll: 0, ndcg: 0 });
    expect(at(3)).toMatchObject({ recallAny: 1, recallAll: 1, ndcg: 1 });
  });
});

describe('the protocols plan the paper ranker beside fts5', () => {
  it('adds bm25 ranker=okapi-paper under --protocol locomo and longmemeval (hybrid has no ranker); a pinned ranker runs alone', async () => {
    const settings = async (protocol: 'locomo' | 'longmemeval', params: string[] = []) =>
      (
        await planRun({
          strategies: ['bm25', 'hybrid'],
          datasets: [`${protocol}:fixtures/datasets/${protocol === 'locomo' ? 'locomo10' : 'longmemeval'}-sample.json`],
          protocol,
          params,
        })
      ).strategies.map((strategy) => strategy.setting);
    expect(await settings('locomo')).toEqual([
      'bm25(unit=message,ranker=fts5)',
      'bm25(unit=message,ranker=okapi-paper)',
      'hybrid(unit=message)',
    ]);
    expect((await settings('longmemeval')).filter((setting) => setting.includes('okapi-paper'))).toEqual([
      'bm25(index=user,unit=session,ranker=okapi-paper)',
      'bm25(index=user,unit=turn,ranker=okapi-paper)',
    ]);
    expect(await settings('locomo', ['bm25.ranker=fts5'])).toEqual([
      'bm25(unit=message,ranker=fts5)',
      'hybrid(unit=message)',
    ]);
    expect(
      (await planRun({ strategies: ['bm25'], scenarios: ['recipes-en'] })).strategies.map((s) => s.setting),
    ).toEqual(['bm25']);
  });
});
