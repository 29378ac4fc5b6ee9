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
 * Session level maps each turn to its session and widens the cutoff until the top holds k distinct
 * sessions (or the corpus ends); the gold sessions are those of the gold turns (an answer session
 * whose has_answer turns are all assistant turns is no gold, as the paper's code relabels it), and
 * NDCG counts every turn of a gold session as relevant. Left out of the averages, as the current
 * run_retrieval.py leaves them out: abstention questions, and questions with no has_answer user
 * turn (their evidence is on the assistant's side, which the corpus does not hold).
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
import type { Protocol, RetrievalAtK, RetrievalFigures } from './schema.js';

export { PROTOCOLS, type Protocol } from './schema.js';

/** The k each paper reports. */
export const PROTOCOL_K: Readonly<Record<Protocol, readonly number[]>> = {
  longmemeval: [1, 3, 5, 10, 30, 50],
  locomo: [5, 10, 25, 50],
};

/** The knob each protocol sets on the strategies that have it (`--param` values the user gives win). */
export const PROTOCOL_KNOBS: Readonly<Record<Protocol, Readonly<Record<string, string>>>> = {
  longmemeval: { index: 'user', unit: 'session,turn' },
  locomo: { unit: 'message' },
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

/** DCG as eval_utils.py computes it: the first relevance as is, the i-th (i ≥ 2) over log2(i). */
function dcg(relevances: readonly number[]): number {
  return relevances.reduce(
    (sum, relevance, index) => sum + (index === 0 ? relevance : relevance / Math.log2(index + 1)),
    0,
  );
}

/**
 * The paper's figures at one cutoff: `ranking` is one id per corpus item, best first (the whole
 * corpus); `relevant` says which items are gold; `gold` the distinct gold ids.
 */
function atCutoff(
  ranking: readonly string[],
  gold: ReadonlySet<string>,
  relevantItems: number,
  cutoff: number,
  k: number,
): RetrievalAtK {
  const top = ranking.slice(0, cutoff);
  const found = new Set(top.filter((id) => gold.has(id)));
  const ideal = dcg(Array.from({ length: Math.min(cutoff, relevantItems) }, () => 1));
  return {
    k,
    recallAny: found.size > 0 ? 1 : 0,
    recallAll: found.size === gold.size ? 1 : 0,
    ndcg: ideal === 0 ? 0 : dcg(top.map((id) => (gold.has(id) ? 1 : 0))) / ideal,
  };
}

/** What LongMemEval's protocol needs of a scenario: its user turns and the session of each. */
interface LongMemEvalCorpus {
  userTurns: ReadonlySet<string>;
  sessionOf: ReadonlyMap<string, number>;
  /** User turns per session (the relevant items of a gold session at session level). */
  turnsInSession: ReadonlyMap<number, number>;
}

function longMemEvalCorpus(steps: readonly Step[]): LongMemEvalCorpus {
  const userTurns = new Set(steps.flatMap((step) => (step.kind === 'user' && step.id !== undefined ? [step.id] : [])));
  const sessionOf = sessionsOfSteps(steps) ?? new Map<string, number>();
  const turnsInSession = new Map<number, number>();
  for (const id of userTurns) {
    const session = sessionOf.get(id) ?? 0;
    turnsInSession.set(session, (turnsInSession.get(session) ?? 0) + 1);
  }
  return { userTurns, sessionOf, turnsInSession };
}

/**
 * LongMemEval's figures of one probe: turn level, and session level by the turn-to-session mapping;
 * or, when each ranked item is a session document (`unit` session), session level alone (`turn` empty).
 */
export function longMemEvalFigures(
  ranking: readonly (readonly string[])[],
  evidence: readonly string[],
  corpus: LongMemEvalCorpus,
  ks: readonly number[],
  unit: RankedUnit = 'turn',
): RetrievalFigures {
  if (unit === 'session') {
    const goldSessions = new Set(
      evidence.filter((id) => corpus.userTurns.has(id)).map((id) => corpus.sessionOf.get(id) ?? 0),
    );
    // A session document holds its session's ids: the session of its first user turn names it.
    const sessions = ranking.flatMap((ids) =>
      ids
        .filter((id) => corpus.userTurns.has(id))
        .slice(0, 1)
        .map((id) => String(corpus.sessionOf.get(id) ?? 0)),
    );
    const gold = new Set([...goldSessions].map(String));
    return { turn: [], session: ks.map((k) => atCutoff(sessions, gold, gold.size, k, k)) };
  }
  // One corpus id per ranked item: its user turn (items holding none are not in the paper's corpus).
  const turns = ranking.flatMap((ids) => ids.filter((id) => corpus.userTurns.has(id)).slice(0, 1));
  const goldTurns = new Set(evidence.filter((id) => corpus.userTurns.has(id)));
  const session = (id: string): string => `session ${corpus.sessionOf.get(id) ?? 0}`;
  const sessions = turns.map(session);
  const goldSessions = new Set([...goldTurns].map(session));
  const sessionItems = [...goldSessions].reduce(
    (sum, name) => sum + (corpus.turnsInSession.get(Number(name.slice('session '.length))) ?? 0),
    0,
  );
  return {
    turn: ks.map((k) => atCutoff(turns, goldTurns, goldTurns.size, k, k)),
    session: ks.map((k) => {
      let cutoff = k;
      while (cutoff < sessions.length && new Set(sessions.slice(0, cutoff)).size < k) cutoff++;
      return atCutoff(sessions, goldSessions, sessionItems, cutoff, k);
    }),
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
 * scenario's ids), no abstention, and a has_answer user turn among its evidence.
 */
export function withProtocol<P extends RankedProbe>(
  probes: readonly P[],
  scenario: Pick<Scenario, 'steps'>,
  protocol: Protocol | undefined,
  unit: RankedUnit = 'turn',
): (P & { protocolRetrieval?: RetrievalFigures })[] {
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
    if (
      !probe.retrieved ||
      step?.kind !== 'probe' ||
      probe.category === 'abstention' ||
      !step.evidence.some((id) => corpus.userTurns.has(id))
    )
      return probe;
    return {
      ...probe,
      protocolRetrieval: longMemEvalFigures(probe.retrieved, step.evidence, corpus, PROTOCOL_K.longmemeval, unit),
    };
  });
}
