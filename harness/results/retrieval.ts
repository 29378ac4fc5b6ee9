/**
 * Retrieval metrics (docs/design.md §5) for strategies that rank what they stored: recall_any@k,
 * recall_all@k and NDCG@k of each probe's ranking against its `evidence`, at turn level and,
 * for scenarios with session boundaries, at session level; then pooled per cell and category.
 *
 * They follow LongMemEval's `src/retrieval/eval_utils.py`: an item is relevant when it holds an
 * evidence step; recall_any@k = 1 when at least one evidence step is in the top k, recall_all@k
 * = 1 when all are; DCG = rel1 + Σ_{i≥2} rel_i / log2(i) (their variant: ranks 1 and 2 weigh
 * the same), normalised by the DCG of an ideal ranking. Two differences, both forced by what a
 * strategy exposes: the ideal ranking's relevant items are those the ranking shows plus one per
 * evidence step none of them holds (the strategy's other items are unseen); and the
 * session level ranks sessions by their first appearance in the turn ranking (LongMemEval maps
 * turns to sessions and widens k until k distinct sessions are in, its NDCG then counting each
 * has_answer turn: `--protocol longmemeval`, protocols.ts), so a session counts once. Every figure
 * here and under a protocol comes from `scoreRanking`, the protocol's rules given as options.
 *
 * A "turn" is what the strategy stores as one item: for vector, bm25 and hybrid an exchange
 * (a user message and its reply; imported LoCoMo dialogues pair two utterances per exchange).
 * Abstention probes (no answer to find) and probes without evidence are left out.
 */
import type { ProbeCategory, Scenario, Step } from '../scenarios/format.js';
import type { RetrievalAtK, RetrievalFigures, RetrievalLevel, RetrievalSummary } from './schema.js';
import { idsOfOpaque, messageIds } from '../scenarios/step-ids.js';
import { memoLast } from '../core/memo.js';

/** k of the default report: `--retrieval-k` changes it. */
export const DEFAULT_RETRIEVAL_K: readonly number[] = [1, 5, 10];

/** What a probe record keeps of a ranking: the step ids of each ranked item, best first, cut to `depth`. */
export function rankedStepIds(
  retrieved: readonly { stepIds: readonly string[] }[] | undefined,
  depth: number,
): { retrieved?: string[][] } {
  return retrieved ? { retrieved: retrieved.slice(0, depth).map((item) => [...item.stepIds]) } : {};
}

/** DCG with LongMemEval's discount: the first relevance undiscounted, the i-th (i ≥ 2) over log2(i). */
function dcg(relevances: readonly number[]): number {
  return relevances.reduce(
    (sum, relevance, index) => sum + (index === 0 ? relevance : relevance / Math.log2(index + 1)),
    0,
  );
}

/** Where a paper's protocol scores a ranking differently from membench's default (harness/results/protocols.ts). */
export interface RankingRules {
  /**
   * How many items are scored: `k` by default; LongMemEval's turn→session rule widens it until
   * the top holds k distinct sessions (the figures are still reported at `k`).
   */
  cutoff?: number;
  /** recall_all of a question with no gold: 0 by default; 1 in LongMemEval's code (Python's `all()` of nothing). */
  recallAllWithoutGold?: 0 | 1;
  /**
   * Whether each ranked item is relevant in NDCG; by default an item holding a gold id.
   * LongMemEval's turn→session rule ranks sessions but counts only the has_answer turns relevant.
   */
  relevant?: readonly boolean[];
}

/**
 * recall_any@k, recall_all@k and NDCG@k of a ranking whose items hold ids, against the gold ids:
 * the one scorer of every retrieval figure, membench's and the papers' protocols'.
 * `relevantItems` is how many items of the whole store are relevant (the ideal ranking's size).
 */
export function scoreRanking(
  ranking: readonly (readonly string[])[],
  gold: readonly string[],
  k: number,
  relevantItems: number,
  rules: RankingRules = {},
): RetrievalAtK {
  const cutoff = rules.cutoff ?? k;
  const wanted = new Set(gold);
  const top = ranking.slice(0, cutoff);
  const found = new Set(top.flatMap((ids) => ids.filter((id) => wanted.has(id))));
  const relevance = top.map((ids, rank) =>
    rules.relevant ? rules.relevant[rank] === true : ids.some((id) => wanted.has(id)),
  );
  const ideal = dcg(Array.from({ length: Math.min(cutoff, relevantItems) }, () => 1));
  const actual = dcg(relevance.map((relevant) => (relevant ? 1 : 0)));
  return {
    k,
    recallAny: found.size > 0 ? 1 : 0,
    recallAll: wanted.size === 0 ? (rules.recallAllWithoutGold ?? 0) : found.size === wanted.size ? 1 : 0,
    ndcg: ideal === 0 ? 0 : actual / ideal,
  };
}

/**
 * Relevant items in the store, as far as the ranking shows them: every ranked item that holds an
 * evidence step, plus one per evidence step no ranked item holds. (Several items may hold one
 * step: entity summaries fold one exchange into many entities.)
 */
function relevantItemCount(ranking: readonly (readonly string[])[], gold: readonly string[]): number {
  const unseen = new Set(gold);
  let items = 0;
  for (const ids of ranking) {
    if (!ids.some((id) => gold.includes(id))) continue;
    items++;
    for (const id of ids) unseen.delete(id);
  }
  return items + unseen.size;
}

/** Step id → session number (the count of `session` steps before it), or undefined when the scenario has no session boundary. */
export const sessionsOfSteps: (steps: readonly Step[]) => ReadonlyMap<string, number> | undefined = memoLast(
  (steps: readonly Step[]): Map<string, number> | undefined => {
    if (!steps.some((step) => step.kind === 'session')) return undefined;
    const sessions = new Map<string, number>();
    let session = 0;
    const visit = (list: readonly Step[]): void => {
      for (const step of list) {
        if (step.kind === 'session') session++;
        const cited = step.kind === 'user' ? (step.cites ?? []) : [];
        for (const id of [...messageIds(step), ...cited]) if (!sessions.has(id)) sessions.set(id, session);
        if (step.kind === 'concurrent') for (const inner of step.concurrent) visit(inner);
      }
    };
    visit(steps);
    return sessions;
  },
);

/** The ranking as sessions: each item's sessions, a session kept at its first appearance (items of no known session stay, as misses). */
function sessionRanking(ranking: readonly (readonly string[])[], sessionOf: ReadonlyMap<string, number>): string[][] {
  const seen = new Set<string>();
  const out: string[][] = [];
  for (const ids of ranking) {
    const sessions = [...new Set(ids.flatMap((id) => (sessionOf.has(id) ? [`s${sessionOf.get(id)}`] : [])))].filter(
      (session) => !seen.has(session),
    );
    if (ids.length > 0 && sessions.length === 0 && ids.some((id) => sessionOf.has(id))) continue; // only sessions already ranked
    for (const session of sessions) seen.add(session);
    out.push(sessions);
  }
  return out;
}

/** A probe's figures at each k: turn level, and session level when the scenario has sessions. */
export function probeRetrieval(
  ranking: readonly (readonly string[])[],
  evidence: readonly string[],
  ks: readonly number[],
  sessionOf?: ReadonlyMap<string, number>,
): RetrievalFigures {
  const turnItems = relevantItemCount(ranking, evidence);
  const figures: RetrievalFigures = { turn: ks.map((k) => scoreRanking(ranking, evidence, k, turnItems)) };
  if (sessionOf) {
    const goldSessions = [...new Set(evidence.flatMap((id) => (sessionOf.has(id) ? [`s${sessionOf.get(id)}`] : [])))];
    const sessions = sessionRanking(ranking, sessionOf);
    figures.session = ks.map((k) => scoreRanking(sessions, goldSessions, k, goldSessions.length));
  }
  return figures;
}

/** What scoring needs of a probe record. */
interface RankedProbe {
  step: number;
  category: ProbeCategory;
  retrieved?: string[][] | undefined;
}

/** A ranking of opaque step ids (what the strategy saw) as the scenario's message ids; an id that is no opaque one stays as it is. */
export function mapRanking(
  ranking: readonly (readonly string[])[],
  idsOf: ReadonlyMap<string, readonly string[]>,
): string[][] {
  return ranking.map((ids) => [...new Set(ids.flatMap((id) => idsOf.get(id) ?? [id]))]);
}

/**
 * Maps each probe's ranking back to the scenario's message ids, and adds `retrieval` to each
 * probe that has a ranking, cites evidence and is answerable.
 */
export function withRetrieval<P extends RankedProbe>(
  probes: readonly P[],
  scenario: Pick<Scenario, 'steps'>,
  ks: readonly number[] = DEFAULT_RETRIEVAL_K,
): (P & { retrieval?: RetrievalFigures })[] {
  const sessionOf = sessionsOfSteps(scenario.steps);
  const idsOf = idsOfOpaque(scenario.steps);
  return probes.map((probe) => {
    if (!probe.retrieved) return probe;
    const mapped = { ...probe, retrieved: mapRanking(probe.retrieved, idsOf) };
    const step = scenario.steps[probe.step];
    if (step?.kind !== 'probe' || step.evidence.length === 0 || probe.category === 'abstention') return mapped;
    return { ...mapped, retrieval: probeRetrieval(mapped.retrieved, step.evidence, ks, sessionOf) };
  });
}

function poolLevel(levels: readonly RetrievalAtK[][]): RetrievalLevel {
  const first = levels[0] ?? [];
  const mean = (values: number[]): number => values.reduce((sum, value) => sum + value, 0) / values.length;
  return {
    n: levels.length,
    atK: first.map(({ k }, i) => ({
      k,
      recallAny: mean(levels.map((level) => level[i]!.recallAny)),
      recallAll: mean(levels.map((level) => level[i]!.recallAll)),
      ndcg: mean(levels.map((level) => level[i]!.ndcg)),
      ...(first[i]!.recall !== undefined ? { recall: mean(levels.map((level) => level[i]!.recall ?? 0)) } : {}),
    })),
  };
}

/** Means over the probes that have figures; undefined when none has (a strategy that does not retrieve). */
export function summarizeRetrieval(
  probes: readonly { retrieval?: RetrievalFigures | undefined }[],
): RetrievalSummary | undefined {
  const scored = probes.flatMap((probe) => (probe.retrieval ? [probe.retrieval] : []));
  if (scored.length === 0) return undefined;
  const sessions = scored.flatMap((figures) => (figures.session ? [figures.session] : []));
  return {
    turn: poolLevel(scored.map((figures) => figures.turn)),
    ...(sessions.length > 0 ? { session: poolLevel(sessions) } : {}),
  };
}

/** The same, per probe category (categories without figures left out). */
export function retrievalByCategory(
  probes: readonly { category: ProbeCategory; retrieval?: RetrievalFigures | undefined }[],
): Partial<Record<ProbeCategory, RetrievalSummary>> {
  const groups = new Map<ProbeCategory, (typeof probes)[number][]>();
  for (const probe of probes)
    if (probe.retrieval) groups.set(probe.category, [...(groups.get(probe.category) ?? []), probe]);
  return Object.fromEntries(
    [...groups]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([category, group]) => [category, summarizeRetrieval(group)!]),
  );
}

/** The same, per the dataset's own category label (probes without a label left out); undefined when none has one. */
export function retrievalByLabel(
  probes: readonly { label?: string | undefined; retrieval?: RetrievalFigures | undefined }[],
): Record<string, RetrievalSummary> | undefined {
  const groups = new Map<string, (typeof probes)[number][]>();
  for (const probe of probes)
    if (probe.retrieval && probe.label !== undefined)
      groups.set(probe.label, [...(groups.get(probe.label) ?? []), probe]);
  if (groups.size === 0) return undefined;
  return Object.fromEntries(
    [...groups].sort(([a], [b]) => a.localeCompare(b)).map(([label, group]) => [label, summarizeRetrieval(group)!]),
  );
}

function poolLevels(levels: readonly RetrievalLevel[]): RetrievalLevel {
  const n = levels.reduce((sum, level) => sum + level.n, 0);
  const weighted = (k: number, key: keyof Omit<RetrievalAtK, 'k'>): number =>
    levels.reduce((sum, level) => sum + level.n * (level.atK.find((at) => at.k === k)?.[key] ?? 0), 0) / n;
  return {
    n,
    atK: (levels[0]?.atK ?? []).map(({ k, recall }) => ({
      k,
      recallAny: weighted(k, 'recallAny'),
      recallAll: weighted(k, 'recallAll'),
      ndcg: weighted(k, 'ndcg'),
      ...(recall !== undefined ? { recall: weighted(k, 'recall') } : {}),
    })),
  };
}

/** Summaries of several cells (e.g. a dataset's conversations) pooled into one: means weighted by each one's n. */
export function poolSummaries(summaries: readonly RetrievalSummary[]): RetrievalSummary | undefined {
  if (summaries.length === 0) return undefined;
  const sessions = summaries.flatMap((summary) => (summary.session ? [summary.session] : []));
  return {
    turn: poolLevels(summaries.map((summary) => summary.turn)),
    ...(sessions.length > 0 ? { session: poolLevels(sessions) } : {}),
  };
}
