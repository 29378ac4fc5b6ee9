/**
 * Retrieval figures as report rows (pure functions of results), shared by the console, report.md
 * and report.html: one row per cell, level (turn, session) and probe category, with
 * recall_any@k, recall_all@k and NDCG@k at each k of the run.
 */
import { okCells } from '../harness/results/cells.js';
import { poolSummaries } from '../harness/results/retrieval.js';
import type { OkCell, RetrievalAtK, RetrievalLevel, RetrievalSummary, RunResult } from '../harness/results/schema.js';

/** One row: a cell's figures at one level, over all its probes (`category` "all") or one category; or a scenario group's, pooled. */
export interface RetrievalRow {
  /** The scenario, or `group G` for a group's pooled row. */
  scenario: string;
  /** The strategy setting (`window(k=2)`). */
  setting: string;
  category: string;
  level: 'turn' | 'session';
  summary: RetrievalLevel;
}

/** The run's k, from the first cell that has retrieval figures (every cell of a run uses the same). */
export function retrievalKs(result: RunResult): number[] {
  const cell = okCells(result.cells).find((item) => item.retrieval);
  return cell?.retrieval?.turn.atK.map(({ k }) => k) ?? [];
}

function levelsOf(summary: RetrievalSummary): [RetrievalRow['level'], RetrievalLevel][] {
  return [
    ['turn', summary.turn],
    ...(summary.session ? [['session', summary.session] as [RetrievalRow['level'], RetrievalLevel]] : []),
  ];
}

/**
 * Rows for every cell that retrieves: overall, or by probe category. The cells of a scenario group
 * (a dataset, a generated suite) are pooled into one row per setting, weighted by probes, unless
 * `detail` asks for every question: a group reads as one suite.
 */
export function retrievalRows(result: RunResult, byCategory: boolean, detail = false): RetrievalRow[] {
  const units: { scenario: string; setting: string; cells: OkCell[] }[] = [];
  const pooled = new Map<string, { scenario: string; setting: string; cells: OkCell[] }>();
  for (const cell of okCells(result.cells)) {
    if (!cell.retrieval) continue;
    if (detail || cell.group === undefined) {
      units.push({ scenario: cell.scenario, setting: cell.setting, cells: [cell] });
      continue;
    }
    const key = `${cell.group}\u0000${cell.setting}`;
    let unit = pooled.get(key);
    if (!unit) {
      unit = { scenario: `group ${cell.group}`, setting: cell.setting, cells: [] };
      pooled.set(key, unit);
      units.push(unit);
    }
    unit.cells.push(cell);
  }
  return units.flatMap(({ scenario, setting, cells }) => {
    const groups: [string, RetrievalSummary | undefined][] = byCategory
      ? [...new Set(cells.flatMap((cell) => Object.keys(cell.retrievalByCategory ?? {})))].map((category) => [
          category,
          poolSummaries(
            cells.flatMap(
              (cell) => cell.retrievalByCategory?.[category as keyof typeof cell.retrievalByCategory] ?? [],
            ),
          ),
        ])
      : [['all', poolSummaries(cells.map((cell) => cell.retrieval!))]];
    return groups.flatMap(([category, summary]) =>
      summary
        ? levelsOf(summary).map(([level, figures]) => ({ scenario, setting, category, level, summary: figures }))
        : [],
    );
  });
}

/** One pooled row: a strategy setting's figures over every scenario it ran, overall or in one category. */
export interface PooledRetrievalRow {
  strategy: string;
  category: string;
  level: 'turn' | 'session';
  /** Scenarios (cells) pooled. */
  cells: number;
  summary: RetrievalLevel;
}

/** Rows per strategy setting, pooled over its cells (weighted by probes): overall first, then by category. */
export function pooledRetrievalRows(result: RunResult): PooledRetrievalRow[] {
  const bySetting = new Map<string, OkCell[]>();
  for (const cell of okCells(result.cells))
    if (cell.retrieval) bySetting.set(cell.setting, [...(bySetting.get(cell.setting) ?? []), cell]);
  return [...bySetting].flatMap(([strategy, cells]) => {
    const categories = [...new Set(cells.flatMap((cell) => Object.keys(cell.retrievalByCategory ?? {})))].sort();
    const labels = [...new Set(cells.flatMap((cell) => Object.keys(cell.retrievalByLabel ?? {})))].sort();
    const groups: [string, RetrievalSummary | undefined][] = [
      ['all', poolSummaries(cells.map((cell) => cell.retrieval!))],
      ...categories.map((category): [string, RetrievalSummary | undefined] => [
        category,
        poolSummaries(
          cells.flatMap((cell) => cell.retrievalByCategory?.[category as keyof typeof cell.retrievalByCategory] ?? []),
        ),
      ]),
      ...labels.map((label): [string, RetrievalSummary | undefined] => [
        `label: ${label}`,
        poolSummaries(cells.flatMap((cell) => cell.retrievalByLabel?.[label] ?? [])),
      ]),
    ];
    return groups.flatMap(([category, summary]) =>
      summary
        ? levelsOf(summary).map(([level, figures]) => ({
            strategy,
            category,
            level,
            cells: cells.length,
            summary: figures,
          }))
        : [],
    );
  });
}

/** A figure with two decimals. */
export const formatFigure = (value: number): string => value.toFixed(2);

/** The column titles of the metrics at each k: recall_any@k, recall_all@k, NDCG@k. */
export function metricTitles(ks: readonly number[]): string[] {
  return ks.flatMap((k) => [`recall_any@${k}`, `recall_all@${k}`, `NDCG@${k}`]);
}

/** The metrics at each k, in `metricTitles` order (a k the row lacks shows "–"). */
export function metricValues(summary: RetrievalLevel, ks: readonly number[]): (number | undefined)[] {
  return ks.flatMap((k) => {
    const at: RetrievalAtK | undefined = summary.atK.find((item) => item.k === k);
    return [at?.recallAny, at?.recallAll, at?.ndcg];
  });
}

/** The sentence that says what the figures mean. */
export const RETRIEVAL_NOTE =
  'Retrieval (strategies that rank what they stored, e.g. vector, bm25, hybrid): for each answerable probe with evidence, the ranking of the whole store for its question, ' +
  'as in LongMemEval: recall_any@k = an evidence step is in the top k, recall_all@k = all are, NDCG@k; turn level ranks stored items (exchanges), ' +
  'session level the sessions they belong to (scenarios with session boundaries). Means over n probes.';

/** One row of a protocol's table in the paper's layout: a strategy setting, a unit (turn, session) and a metric, its value at each k. */
export interface ProtocolRow {
  protocol: string;
  strategy: string;
  /** What was ranked: turns, sessions, or (LoCoMo) dialog utterances, observations or session summaries. */
  unit: 'turn' | 'session' | 'dialog' | 'observation' | 'summary';
  metric: 'recall_any' | 'recall_all' | 'NDCG' | 'recall';
  /** Whose averaging the means follow, named by the paper's code (LongMemEval's two; absent for LoCoMo's one). */
  averaging?: ProtocolAveraging;
  /** Questions averaged, pooled over the setting's cells. */
  n: number;
  values: { k: number; value: number }[];
}

const PROTOCOL_METRICS = [
  ['recall_any', 'recallAny'],
  ['recall_all', 'recallAll'],
  ['NDCG', 'ndcg'],
] as const;
/** LoCoMo's table reports one figure: the share of the evidence retrieved. */
const LOCOMO_METRICS = [['recall', 'recall']] as const;

/**
 * LongMemEval's two averagings, named by the code that prints them: the current run_retrieval.py
 * means over the questions it scores (a has_answer user turn, no abstention);
 * print_retrieval_metrics.py (and the first run_retrieval.py) over every non-abstention question.
 */
export const PROTOCOL_AVERAGINGS = ['run_retrieval.py', 'print_retrieval_metrics.py'] as const;
export type ProtocolAveraging = (typeof PROTOCOL_AVERAGINGS)[number];

/** LoCoMo's retrieval units: the dialog, and the derived corpora replayed in place of it. */
const LOCOMO_UNITS = ['dialog', 'observation', 'summary'] as const;
type LocomoUnit = (typeof LOCOMO_UNITS)[number];
const locomoUnit = (cell: OkCell): LocomoUnit => cell.protocolRetrieval?.documents ?? 'dialog';

/** The `--protocol` figures as one table per protocol (rows: strategy × unit × averaging × metric, columns: k), each setting pooled over its cells. */
export function protocolRows(result: RunResult): ProtocolRow[] {
  type Summaries = Record<ProtocolAveraging, RetrievalSummary[]>;
  const groups = new Map<string, { protocol: string; strategy: string; corpus: LocomoUnit; summaries: Summaries }>();
  // LoCoMo's units in its order: a setting's dialog row, then its observation and summary rows.
  const cells = okCells(result.cells).sort(
    (a, b) => LOCOMO_UNITS.indexOf(locomoUnit(a)) - LOCOMO_UNITS.indexOf(locomoUnit(b)),
  );
  for (const cell of cells) {
    const figures = cell.protocolRetrieval;
    if (!figures) continue;
    const corpus = locomoUnit(cell);
    const key = `${figures.protocol}\u0000${cell.setting}\u0000${corpus}`;
    const group = groups.get(key) ?? {
      protocol: figures.protocol,
      strategy: cell.setting,
      corpus,
      summaries: { 'run_retrieval.py': [], 'print_retrieval_metrics.py': [] },
    };
    if (figures.summary) group.summaries['run_retrieval.py'].push(figures.summary);
    if (figures.nonAbstentionSummary) group.summaries['print_retrieval_metrics.py'].push(figures.nonAbstentionSummary);
    groups.set(key, group);
  }
  return [...groups.values()].flatMap(({ protocol, strategy, corpus, summaries }) => {
    if (protocol === 'locomo') {
      const pooled = poolSummaries(summaries['run_retrieval.py']);
      return (pooled ? [pooled.turn] : []).flatMap((level) =>
        LOCOMO_METRICS.map(([metric, key]) => ({
          protocol,
          strategy,
          unit: corpus,
          metric,
          n: level.n,
          values: level.atK.map((at) => ({ k: at.k, value: at[key] ?? 0 })),
        })),
      );
    }
    const averaged = PROTOCOL_AVERAGINGS.flatMap((averaging) => {
      const pooled = poolSummaries(summaries[averaging]);
      return pooled ? levelsOf(pooled).map(([unit, level]) => ({ averaging, unit, level })) : [];
    });
    return averaged
      .filter(({ level }) => level.atK.length > 0) // a session-unit setting has no turn table
      .sort((a, b) => (a.unit === b.unit ? 0 : a.unit === 'session' ? -1 : 1))
      .flatMap(({ averaging, unit, level }): ProtocolRow[] =>
        PROTOCOL_METRICS.map(([metric, key]) => ({
          protocol,
          strategy,
          unit,
          metric,
          averaging,
          n: level.n,
          values: level.atK.map((at) => ({ k: at.k, value: at[key] })),
        })),
      );
  });
}

/** What each of LongMemEval's averagings takes the mean over, said above its table. */
export const PROTOCOL_AVERAGING_NOTES: Readonly<Record<ProtocolAveraging, string>> = {
  'run_retrieval.py':
    'averaged as the current src/retrieval/run_retrieval.py: over the n questions with a has_answer user turn',
  'print_retrieval_metrics.py':
    'averaged as src/evaluation/print_retrieval_metrics.py (and the first run_retrieval.py): over every non-abstention question, one without a has_answer user turn scoring recall_any 0, recall_all 1, NDCG 0',
};

/**
 * One protocol's rows as tables: one per averaging (LongMemEval has two, each captioned with the
 * code it follows; LoCoMo one, uncaptioned), columns strategy, unit, metric, n, then one per k.
 */
export function protocolTables(rows: readonly ProtocolRow[]): { caption?: string; head: string[]; body: string[][] }[] {
  const averagings = [...new Set(rows.map((row) => row.averaging))];
  return averagings.map((averaging) => {
    const own = rows.filter((row) => row.averaging === averaging);
    const ks = own[0]?.values.map(({ k }) => k) ?? [];
    return {
      ...(averaging !== undefined ? { caption: PROTOCOL_AVERAGING_NOTES[averaging] } : {}),
      head: ['strategy', 'unit', 'metric', 'n', ...ks.map((k) => `@${k}`)],
      body: own.map((row) => [
        row.strategy,
        row.unit,
        row.metric,
        String(row.n),
        ...row.values.map(({ value }) => formatFigure(value)),
      ]),
    };
  });
}

/** What the two bm25 rows of a protocol table are. */
const BM25_RANKERS_NOTE =
  "bm25 rows with ranker=okapi-paper are the paper's BM25 (rank_bm25's BM25Okapi over text split at spaces, every document ranked); ranker=fts5 rows are membench's (FTS5 bm25() over stemmed terms, documents holding a query term).";

/** What a protocol table says it is. */
export const PROTOCOL_NOTES: Readonly<Record<string, string>> = {
  longmemeval:
    "LongMemEval's retrieval protocol (xiaowu0162/LongMemEval src/retrieval): user turns indexed, the has_answer user turns gold; unit=session ranks session documents (a session's user turns joined, the paper's session granularity); " +
    'unit=turn ranks user turns, its session rows the turn ranking mapped to sessions, the cutoff widened until k distinct sessions are in; ' +
    "only has_answer turns find a gold session and count as relevant in NDCG (evaluate_retrieval_turn2session: an answer session's other turns are a pseudo-session of their own); " +
    "abstention questions left out; two tables, one per averaging of the paper's code. Published figures to compare with: docs/protocols.md. " +
    BM25_RANKERS_NOTE,
  locomo:
    "LoCoMo's retrieval recall (snap-research/locomo task_eval/evaluation.py): the share of a question's evidence dia_ids among the top k retrieved; dialog unit = one utterance per document (unit=message); " +
    "observation unit = the file's observations replayed in place of the dialog, each citing dia_ids; summary unit = its session summaries, each standing for its session's dia_ids; " +
    'abstention (adversarial) questions and questions without evidence left out. See docs/protocols.md. ' +
    BM25_RANKERS_NOTE,
};

/** The papers' names, for sentences. */
const PROTOCOL_TITLES: Readonly<Record<string, string>> = { longmemeval: 'LongMemEval', locomo: 'LoCoMo' };

/**
 * The run's `--protocol` when it scored no question (its tables would be empty), with why: said where
 * the tables would be, so an abstention-only file does not pass as a protocol run with nothing to show.
 */
export function unscoredProtocol(result: RunResult): { protocol: string; note: string } | undefined {
  const protocol = result.header.protocol;
  if (protocol === undefined || protocolRows(result).some((row) => row.protocol === protocol)) return undefined;
  const cells = okCells(result.cells);
  const questions = new Map<string, { abstention: boolean; ranked: boolean }>();
  for (const cell of cells)
    for (const probe of cell.probes) {
      const key = `${cell.scenario}\u0000${probe.step}`;
      const seen = questions.get(key);
      questions.set(key, {
        abstention: probe.category === 'abstention',
        ranked: (seen?.ranked ?? false) || probe.retrieved !== undefined,
      });
    }
  const all = [...questions.values()];
  const abstention = all.filter((question) => question.abstention).length;
  const why =
    cells.length === 0
      ? 'no cell ran to its end'
      : all.length === 0
        ? 'the run holds no question'
        : abstention === all.length
          ? all.length === 1
            ? 'its only question is an abstention question, which it leaves out'
            : `all ${all.length} are abstention questions, which it leaves out`
          : !all.some((question) => question.ranked && !question.abstention)
            ? 'no strategy of the run ranked what it stored (the protocol scores rankings: vector, bm25, hybrid)'
            : `of its ${all.length} questions, ${abstention} are abstention questions and the other ${all.length - abstention} ${protocol === 'locomo' ? 'cite no evidence' : 'have no ranking'}, which it leaves out`;
  return {
    protocol,
    note: `no question was scored under the ${PROTOCOL_TITLES[protocol] ?? protocol} protocol: ${why}`,
  };
}
