/**
 * The papers' own retrieval protocols (`--protocol`), so membench's figures stand beside the
 * published tables. Each protocol rescores the ranking a retrieving strategy returned at a probe
 * (mapped back to the scenario's message ids, harness/results/retrieval.ts) by the paper's rules.
 *
 * LongMemEval (xiaowu0162/LongMemEval, src/retrieval/run_retrieval.py and eval_utils.py): the
 * corpus is the user turns (run with `index: user`, so each stored exchange is found by its user
 * turn alone; items holding no user turn are left out); the gold turns are the user turns marked
 * `has_answer`; k ∈ {1, 3, 5, 10, 30, 50}; recall_any@k (a gold item in the top k), recall_all@k
 * (every gold item: 1 when there is none, as Python's all() of nothing), NDCG@k with binary
 * relevance and the first rank undiscounted, the ideal ranking being every gold item of the corpus.
 * Session level is `evaluate_retrieval_turn2session`: each turn is named after its session, except
 * that run_retrieval.py renames an answer session's turns without has_answer `noans_…`, a
 * pseudo-session that is no gold; the cutoff is widened until the top holds k distinct sessions
 * (pseudo-sessions count) or the corpus ends; a gold session is found only through a has_answer
 * turn, and NDCG counts only the has_answer turns relevant. Abstention questions are left out;
 * a question with no has_answer user turn (its evidence on the assistant's side, which the corpus
 * does not hold) has no gold and scores recall_any 0, recall_all 1, NDCG 0, marked `noTarget`:
 * the current run_retrieval.py leaves it out of its means, print_retrieval_metrics.py (and the
 * first run_retrieval.py) average it in. A cell carries both means (cell-result.ts).
 *
 * Session granularity (`--granularity session` there, `unit=session` here; the protocol runs both
 * units): `process_item_flat_index` joins a session's user turns into one document whose id is
 * the session's, gold when it holds a has_answer user turn; each ranked item is then one session
 * and the session table is scored on that ranking directly (no turn table: there are no turns).
 *
 * LoCoMo (snap-research/locomo, task_eval/evaluation.py `eval_question_answering`): a question's
 * recall is the share of its evidence dia_ids among the ids of the retrieved context; k ∈ {5, 10,
 * 25, 50}; the dialog unit ranks one utterance per document (`unit=message`, which the protocol
 * sets). Questions without evidence count 1 there; here they, and abstention (adversarial)
 * questions, are left out.
 */
import type { ProbeCategory, Scenario, Step } from '../scenarios/format.js';
import { scoreRanking, sessionsOfSteps } from './retrieval.js';
import type { Protocol, ProtocolFigures, RetrievalAtK, RetrievalFigures } from './schema.js';

export { PROTOCOLS, type Protocol } from './protocol-names.js';

/** The k each paper reports. */
export const PROTOCOL_K: Readonly<Record<Protocol, readonly number[]>> = {
  longmemeval: [1, 3, 5, 10, 30, 50],
  locomo: [5, 10, 25, 50],
};

/**
 * The knob each protocol sets on the strategies that have it (`--param` values the user gives win).
 * `ranker` runs the paper's BM25 (`okapi-paper`) beside membench's (`fts5`) as two settings of
 * `bm25`; `-p bm25.ranker=fts5` (or `okapi-paper`) keeps one.
 */
export const PROTOCOL_KNOBS: Readonly<Record<Protocol, Readonly<Record<string, string>>>> = {
  longmemeval: { index: 'user', unit: 'session,turn', ranker: 'fts5,okapi-paper' },
  locomo: { unit: 'message', ranker: 'fts5,okapi-paper' },
};

/** LoCoMo's figures of one probe at each k: `recall`, the share of the evidence list's ids in the top k items (an id listed twice counted twice, as LoCoMo's code counts it), with recall_any, recall_all and NDCG of the same ranking. */
export function locomoFigures(
  ranking: readonly (readonly string[])[],
  evidence: readonly string[],
  ks: readonly number[],
): RetrievalFigures {
  const gold = new Set(evidence);
  return {
    turn: ks.map((k) => {
      const found = new Set(ranking.slice(0, k).flatMap((ids) => ids.filter((id) => gold.has(id))));
      const relevant = ranking.filter((ids) => ids.some((id) => gold.has(id))).length;
      // recall_acc iterates the evidence list: an id listed twice counts twice.
      const recall = evidence.filter((id) => found.has(id)).length / evidence.length;
      return { ...scoreRanking(ranking, evidence, k, Math.max(relevant, gold.size)), recall };
    }),
  };
}

/** What LongMemEval's protocol needs of a scenario: its user turns and the session of each. */
interface LongMemEvalCorpus {
  userTurns: ReadonlySet<string>;
  sessionOf: ReadonlyMap<string, number>;
}

function longMemEvalCorpus(steps: readonly Step[]): LongMemEvalCorpus {
  const userTurns = new Set(steps.flatMap((step) => (step.kind === 'user' && step.id !== undefined ? [step.id] : [])));
  return { userTurns, sessionOf: sessionsOfSteps(steps) ?? new Map<string, number>() };
}

/** Scored as LongMemEval's code scores: a question with no gold gets recall_all 1 (Python's `all()` of nothing). */
const LONGMEMEVAL_RULES = { recallAllWithoutGold: 1 } as const;

/** How many of `keys`, from the first, the top needs to hold `k` distinct ones (eval_utils.py's `effective_k`). */
function distinctCutoff(keys: readonly string[], k: number): number {
  const seen = new Set<string>();
  for (const [index, key] of keys.entries()) {
    seen.add(key);
    if (seen.size >= k) return Math.max(index + 1, k);
  }
  return Math.max(keys.length + 1, k); // as eval_utils.py's loop ends: one past the ranking
}

/**
 * `evaluate_retrieval_turn2session` of eval_utils.py on a ranking of user turns. run_retrieval.py
 * names each turn after its session, except that the turns of an answer session that lack
 * has_answer are renamed `noans_…`: they form a pseudo-session of their own, which is no gold but
 * counts as one more distinct session when the cutoff is widened to k distinct sessions. So only
 * a has_answer turn finds its session, and in NDCG only the has_answer turns are relevant.
 */
function turnToSession(
  turns: readonly string[],
  goldTurns: ReadonlySet<string>,
  sessionOf: ReadonlyMap<string, number>,
  ks: readonly number[],
): RetrievalAtK[] {
  const sessionName = (id: string): string => `session ${sessionOf.get(id) ?? 0}`;
  const answerSessions = new Set([...goldTurns].map(sessionName));
  const keys = turns.map((id) =>
    goldTurns.has(id) || !answerSessions.has(sessionName(id)) ? sessionName(id) : `noans ${sessionName(id)}`,
  );
  const ranking = keys.map((key) => [key]);
  const relevant = turns.map((id) => goldTurns.has(id));
  return ks.map((k) =>
    scoreRanking(ranking, [...answerSessions], k, goldTurns.size, {
      ...LONGMEMEVAL_RULES,
      cutoff: distinctCutoff(keys, k),
      relevant,
    }),
  );
}

/**
 * Each id once, where it first comes: the paper ranks corpus items, each at most once, while a
 * strategy's items (an entity summary, a memory file) can map to a turn or session already ranked;
 * counted again, it would be found twice and push NDCG past 1.
 */
function firstOfEach(ids: readonly string[]): string[] {
  return [...new Set(ids)];
}

/**
 * LongMemEval's figures of one probe: turn level, and session level by the turn-to-session mapping;
 * or, when each ranked item is a session document (`unit` session), session level alone (`turn` empty).
 * A probe whose evidence holds no user turn has no gold here: it scores recall_any 0, recall_all 1
 * and NDCG 0, as the paper's code scores it.
 */
export function longMemEvalFigures(
  ranking: readonly (readonly string[])[],
  evidence: readonly string[],
  corpus: LongMemEvalCorpus,
  ks: readonly number[],
  unit: RankedUnit = 'turn',
): RetrievalFigures {
  const goldTurns = new Set(evidence.filter((id) => corpus.userTurns.has(id)));
  if (unit === 'session') {
    const sessionName = (id: string): string => String(corpus.sessionOf.get(id) ?? 0);
    // A session document holds its session's ids: the session of its first user turn names it.
    const sessions = firstOfEach(
      ranking.flatMap((ids) =>
        ids
          .filter((id) => corpus.userTurns.has(id))
          .slice(0, 1)
          .map(sessionName),
      ),
    ).map((name) => [name]);
    const gold = [...new Set([...goldTurns].map(sessionName))];
    return { turn: [], session: ks.map((k) => scoreRanking(sessions, gold, k, gold.length, LONGMEMEVAL_RULES)) };
  }
  // One corpus id per ranked item: its user turn (items holding none are not in the paper's corpus).
  const turns = firstOfEach(ranking.flatMap((ids) => ids.filter((id) => corpus.userTurns.has(id)).slice(0, 1)));
  return {
    turn: ks.map((k) =>
      scoreRanking(
        turns.map((id) => [id]),
        [...goldTurns],
        k,
        goldTurns.size,
        LONGMEMEVAL_RULES,
      ),
    ),
    session: turnToSession(turns, goldTurns, corpus.sessionOf, ks),
  };
}

/** What one ranked item of a strategy is: an exchange (`turn`) or a session's exchanges joined (`session`). */
export type RankedUnit = 'turn' | 'session';

/** What protocol scoring needs of a probe record. */
interface RankedProbe {
  step: number;
  category: ProbeCategory;
  retrieved?: string[][] | undefined;
}

/**
 * Adds `protocolRetrieval` to each probe the protocol scores: a ranking (already mapped to the
 * scenario's ids) of a question that is no abstention. LoCoMo scores the questions with evidence.
 * LongMemEval scores every such question; one without a has_answer user turn (no gold in the
 * paper's corpus) is marked `noTarget`: the current run_retrieval.py leaves it out of its means,
 * print_retrieval_metrics.py averages it in.
 */
export function withProtocol<P extends RankedProbe>(
  probes: readonly P[],
  scenario: Pick<Scenario, 'steps'>,
  protocol: Protocol | undefined,
  unit: RankedUnit = 'turn',
): (P & { protocolRetrieval?: ProtocolFigures })[] {
  if (protocol === 'locomo') {
    return probes.map((probe) => {
      const step = scenario.steps[probe.step];
      if (!probe.retrieved || step?.kind !== 'probe' || probe.category === 'abstention' || step.evidence.length === 0)
        return probe;
      return { ...probe, protocolRetrieval: locomoFigures(probe.retrieved, step.evidence, PROTOCOL_K.locomo) };
    });
  }
  if (protocol !== 'longmemeval') return [...probes];
  const corpus = longMemEvalCorpus(scenario.steps);
  return probes.map((probe) => {
    const step = scenario.steps[probe.step];
    if (!probe.retrieved || step?.kind !== 'probe' || probe.category === 'abstention') return probe;
    const figures = longMemEvalFigures(probe.retrieved, step.evidence, corpus, PROTOCOL_K.longmemeval, unit);
    const target = step.evidence.some((id) => corpus.userTurns.has(id));
    return { ...probe, protocolRetrieval: target ? figures : { ...figures, noTarget: true } };
  });
}
