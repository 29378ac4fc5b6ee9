/**
 * `membench explain`: the interview questions about agent memory answered from one run's own
 * figures, in English and Chinese. Every sentence cites the figure it rests on (in brackets:
 * which table and which number); where the run did not measure something it says so instead of
 * guessing. Pure: results → sections.
 */
import type { DistanceRow } from '../harness/results/by-distance.js';
import type { LeaderboardRow } from '../harness/results/leaderboard.js';
import { distanceTables, leaderboards } from './verdict.js';
import { markdownLine } from './summary.js';
import { shortenText } from '../harness/core/text.js';
import type { ModePrice, RunResult } from '../harness/results/schema.js';
import type { StrategyTraits } from '../harness/core/strategy-traits.js';

export type Language = 'en' | 'zh';

/** One question and the sentences that answer it. */
export interface Answer {
  id: 'window-k' | 'summary-loses' | 'vector-vs-rag' | 'files-or-database' | 'sync-or-async';
  question: string;
  sentences: string[];
}

const f2 = (value: number | null | undefined): string =>
  value === null || value === undefined ? '–' : value.toFixed(2);
const ci = (row: LeaderboardRow): string =>
  row.contextRecall.interval ? ` [${f2(row.contextRecall.interval.lo)}, ${f2(row.contextRecall.interval.hi)}]` : '';
/** A row's context tokens per turn; "–" where its cells recorded none (ranking-only `--protocol` cells), never a cost of 0. */
const tokens = (row: LeaderboardRow): string => (row.contextMeasured ? String(Math.round(row.contextPerTurn)) : '–');

/** Texts of both languages, picked by `lang`: every template is written twice, side by side. */
type Text = Record<Language, string>;
const pick = (lang: Language, text: Text): string => text[lang];

const QUESTIONS: Record<Answer['id'], Text> = {
  'window-k': { en: 'How do I choose K for a window memory?', zh: '窗口记忆的 K 该怎么选？' },
  'summary-loses': { en: 'What does summary memory lose?', zh: '摘要记忆会丢掉什么？' },
  'vector-vs-rag': { en: 'Vector memory or retrieval over documents?', zh: '向量记忆和文档检索（RAG）有什么区别？' },
  'files-or-database': { en: 'Files or a database for long-term memory?', zh: '长期记忆用文件还是数据库？' },
  'sync-or-async': {
    en: 'When must memory be written synchronously, and when in the background?',
    zh: '记忆什么时候必须同步写入，什么时候可以后台写？',
  },
};

/**
 * A strategy's traits as the run's header recorded them: the questions pick their cells by kind,
 * never by strategy name (a file written before traits existed has none, and answers "no cells").
 */
type TraitsOf = (strategy: string) => StrategyTraits | undefined;

function traitsFrom(result: RunResult): TraitsOf {
  const traits = new Map(result.header.strategies.map((strategy) => [strategy.name, strategy.traits]));
  return (strategy) => traits.get(strategy);
}

/**
 * What a question says when no cell of the kind it needs is ok: that the run's cells of that kind
 * all failed (naming one and its error), or else the run it takes. A run whose window cells all
 * failed has window cells: "no window cells" would send its user to run them again, blind.
 */
function unanswered(
  lang: Language,
  result: RunResult,
  traits: TraitsOf,
  needs: (traits: StrategyTraits | undefined) => boolean,
  what: string,
  absent: Text,
): string[] {
  const failed = result.cells.filter((cell) => cell.status === 'error' && needs(traits(cell.strategy)));
  if (failed.length === 0) return [pick(lang, absent)];
  const first = failed[0]!;
  const error = first.status === 'error' ? shortenText(first.error, 200) : '';
  return [
    pick(lang, {
      en: `This run's ${what} cells all failed (${failed.length} in error; ${first.id}: ${error}), so it has no figures to answer with: rerun them with \`membench run --resume DIR\`.`,
      zh: `本次运行的 ${what} 单元全部失败（${failed.length} 个出错；${first.id}：${error}），没有数据可以回答：用 \`membench run --resume DIR\` 重跑它们。`,
    }),
  ];
}

/** The farthest distance bucket (in exchanges) a setting still recalls at least 0.8 of, and how it does beyond. */
function reach(rows: readonly DistanceRow[], setting: string): { held?: DistanceRow; beyond?: DistanceRow } {
  const mine = rows.filter((row) => row.setting === setting && row.contextRecall.n > 0);
  let held: DistanceRow | undefined;
  for (const row of mine) {
    if ((row.contextRecall.value ?? 0) >= 0.8) held = row;
    else break;
  }
  const beyond = mine.filter((row) => !held || row.bucket.hi > held.bucket.hi);
  const pooled = beyond.reduce(
    (sum, row) => ({ hits: sum.hits + row.contextRecall.hits, n: sum.n + row.contextRecall.n }),
    { hits: 0, n: 0 },
  );
  return {
    ...(held ? { held } : {}),
    ...(pooled.n ? { beyond: { ...beyond[0]!, contextRecall: { ...pooled, value: pooled.hits / pooled.n } } } : {}),
  };
}

function windowK(
  lang: Language,
  result: RunResult,
  rows: readonly LeaderboardRow[],
  distance: readonly DistanceRow[],
  traits: TraitsOf,
): string[] {
  const windows = rows.filter((row) => traits(row.strategy)?.kind === 'window');
  if (windows.length === 0)
    return unanswered(lang, result, traits, (mine) => mine?.kind === 'window', 'window', {
      en: 'This run has no window cells: run `membench run -s window -p window.k=2,4,8` to answer it with numbers.',
      zh: '本次运行没有 window 的结果：运行 `membench run -s window -p window.k=2,4,8` 才能用数据回答。',
    });
  const buffer = rows.find((row) => traits(row.strategy)?.kind === 'full-history');
  const out = windows.map((row) => {
    const { held, beyond } = reach(distance, row.setting);
    const k = /k=(\d+)/u.exec(row.setting)?.[1] ?? '?';
    const base = pick(lang, {
      en: `${row.setting} recalls ${f2(row.contextRecall.value)}${ci(row)} of the answerable probes at ${tokens(row)} context tokens per turn [leaderboard, n=${row.contextRecall.n}]`,
      zh: `${row.setting} 的上下文召回率为 ${f2(row.contextRecall.value)}${ci(row)}，每轮上下文 ${tokens(row)} 个 token [排行榜，n=${row.contextRecall.n}]`,
    });
    const cliff = held
      ? pick(lang, {
          en: `; it holds facts up to ${held.bucket.hi} exchanges back (recall ${f2(held.contextRecall.value)}, n=${held.contextRecall.n}) and ${beyond ? `recalls ${f2(beyond.contextRecall.value)} of those further back (n=${beyond.contextRecall.n})` : 'the run asked nothing further back'} [recall by distance; K=${k}].`,
          zh: `；它能记住 ${held.bucket.hi} 轮以内的事实（召回 ${f2(held.contextRecall.value)}，n=${held.contextRecall.n}），${beyond ? `更早的事实只召回 ${f2(beyond.contextRecall.value)}（n=${beyond.contextRecall.n}）` : '本次没有问更早的事实'} [按距离的召回；K=${k}]。`,
        })
      : pick(lang, { en: '; the run has no probe distances for it.', zh: '；本次没有它的距离数据。' });
    return base + cliff;
  });
  out.push(
    pick(lang, {
      en: `So choose K at least as large as the number of exchanges your questions reach back; every extra exchange costs about ${Math.round(windows[0]!.contextPerTurn / Math.max(1, Number(/k=(\d+)/u.exec(windows[0]!.setting)?.[1] ?? 1)))} context tokens per turn here${buffer ? `, and keeping everything (buffer) costs ${tokens(buffer)} per turn for recall ${f2(buffer.contextRecall.value)}` : ''} [leaderboard].`,
      zh: `所以 K 至少要覆盖问题会回溯的轮数；本次每多保留一轮大约多 ${Math.round(windows[0]!.contextPerTurn / Math.max(1, Number(/k=(\d+)/u.exec(windows[0]!.setting)?.[1] ?? 1)))} 个上下文 token${buffer ? `，而全部保留（buffer）每轮要 ${tokens(buffer)} 个 token，召回率 ${f2(buffer.contextRecall.value)}` : ''} [排行榜]。`,
    }),
  );
  return out;
}

function summaryLoses(
  lang: Language,
  rows: readonly LeaderboardRow[],
  offline: boolean,
  result: RunResult,
  traits: TraitsOf,
): string[] {
  const summarises = (strategy: string): boolean => traits(strategy)?.kind === 'summary';
  const summaries = rows.filter((row) => summarises(row.strategy));
  if (summaries.length === 0)
    return unanswered(lang, result, traits, (mine) => mine?.kind === 'summary', 'summary', {
      en: 'This run has no summary cells: run `-s summary -s summary-buffer` to answer it.',
      zh: '本次运行没有摘要策略的结果：加上 `-s summary -s summary-buffer` 再运行。',
    });
  const buffer = rows.find((row) => traits(row.strategy)?.kind === 'full-history');
  const compressed = result.cells
    .filter((cell) => summarises(cell.strategy))
    .reduce((sum, cell) => sum + (cell.durabilityOutcome?.counts.compressedAway ?? 0), 0);
  const out = summaries.map((row) =>
    pick(lang, {
      en: `${row.setting} recalls ${f2(row.contextRecall.value)}${ci(row)} and holds ${f2(row.evidenceRecall.mean)} of the evidence at ${tokens(row)} tokens per turn, plus ${Math.round(row.maintenancePerTurn)} maintenance tokens per turn for summarising${buffer && row.vsBest && rows[0] === buffer ? `; against buffer it is ${row.vsBest.verdict === 'within noise' ? 'within noise' : `${row.vsBest.verdict} by ${f2(Math.abs(row.vsBest.difference))}`}` : ''} [leaderboard, n=${row.contextRecall.n}].`,
      zh: `${row.setting} 的召回率为 ${f2(row.contextRecall.value)}${ci(row)}，证据保留 ${f2(row.evidenceRecall.mean)}，每轮上下文 ${tokens(row)} 个 token，另有每轮 ${Math.round(row.maintenancePerTurn)} 个 token 用于生成摘要 [排行榜，n=${row.contextRecall.n}]。`,
    }),
  );
  out.push(
    pick(lang, {
      en: `What it loses is what the summary leaves out: verbatim wording (context recall needs the exact string) and older details once the budget is full${compressed ? `; the durability checks counted ${compressed} acknowledged memories summarised away with no crash at all [durability, compressed away]` : ''}.`,
      zh: `它丢掉的是摘要没写进去的东西：原话（上下文召回要求原文出现）和预算用满后的旧细节${compressed ? `；耐久性检查发现有 ${compressed} 条已确认的记忆在没有崩溃的情况下被摘要掉了 [耐久性，compressed away]` : ''}。`,
    }),
  );
  if (offline)
    out.push(
      pick(lang, {
        en: 'These summaries come from the offline reference model, not an LLM: a live model keeps different things (run with --model openai:NAME).',
        zh: '这些摘要来自离线参考模型而不是 LLM：真实模型保留的内容会不同（用 --model openai:NAME 运行）。',
      }),
    );
  return out;
}

function vectorVsRag(
  lang: Language,
  result: RunResult,
  rows: readonly LeaderboardRow[],
  distance: readonly DistanceRow[],
  embedder: string,
  traits: TraitsOf,
): string[] {
  const vector = rows.find((row) => traits(row.strategy)?.ranks === 'embeddings');
  if (!vector)
    return unanswered(lang, result, traits, (mine) => mine?.ranks === 'embeddings', 'vector', {
      en: 'This run has no vector cells: run `-s vector` to answer it.',
      zh: '本次运行没有 vector 的结果：加上 `-s vector` 再运行。',
    });
  const far = distance.filter((row) => row.setting === vector.setting && row.bucket.hi >= 16);
  const pooled = far.reduce(
    (sum, row) => ({ hits: sum.hits + row.contextRecall.hits, n: sum.n + row.contextRecall.n }),
    { hits: 0, n: 0 },
  );
  const out = [
    pick(lang, {
      en: `Vector memory retrieves past exchanges of this conversation by similarity: ${vector.setting} recalls ${f2(vector.contextRecall.value)}${ci(vector)} at ${tokens(vector)} tokens per turn${pooled.n ? `, and ${f2(pooled.hits / pooled.n)} of facts 16 or more exchanges back (n=${pooled.n})` : ''} [leaderboard; recall by distance].`,
      zh: `向量记忆按相似度检索本次对话中过去的轮次：${vector.setting} 的召回率为 ${f2(vector.contextRecall.value)}${ci(vector)}，每轮 ${tokens(vector)} 个 token${pooled.n ? `，对 16 轮以前的事实召回 ${f2(pooled.hits / pooled.n)}（n=${pooled.n}）` : ''} [排行榜；按距离的召回]。`,
    }),
    pick(lang, {
      en: 'Retrieval over a fixed document corpus (RAG) indexes documents written once, not a conversation that keeps correcting itself; this run measures only the conversational kind, so it says nothing about a document corpus.',
      zh: '文档检索（RAG）索引的是一次写好的文档，而不是不断自我更正的对话；本次只测了对话记忆，不能说明文档语料上的效果。',
    }),
    pick(lang, {
      en: `Corrections show the difference: vector returns old and new values side by side in ${f2(vector.conflictExposure.value)} of probes (n=${vector.conflictExposure.n}) [leaderboard, conflict exposure].`,
      zh: `更正最能看出区别：向量记忆在 ${f2(vector.conflictExposure.value)} 的问题里把旧值和新值一起取回（n=${vector.conflictExposure.n}）[排行榜，冲突暴露]。`,
    }),
  ];
  if (embedder.startsWith('hashed'))
    out.push(
      pick(lang, {
        en: `The embedder was ${embedder}, a hashed bag of words, not a neural model: --embedder openai:NAME gives the neural comparison.`,
        zh: `本次嵌入模型是 ${embedder}（哈希词袋，不是神经网络模型）：用 --embedder openai:NAME 才能做神经检索的对比。`,
      }),
    );
  return out;
}

function filesOrDatabase(
  lang: Language,
  rows: readonly LeaderboardRow[],
  result: RunResult,
  traits: TraitsOf,
): string[] {
  const files = rows.find((row) => traits(row.strategy)?.storage === 'files');
  // The SQLite-backed memories that choose what reaches the context (retrieval, extraction), as files do.
  const stores = rows.filter((row) => {
    const mine = traits(row.strategy);
    return mine?.storage === 'sqlite' && (mine.kind === 'retrieval' || mine.kind === 'extraction');
  });
  if (!files)
    return unanswered(lang, result, traits, (mine) => mine?.storage === 'files', 'file-index', {
      en: 'This run has no file-index cells: run `-s file-index -s vector -s entity` to answer it.',
      zh: '本次运行没有 file-index 的结果：加上 `-s file-index -s vector -s entity` 再运行。',
    });
  const cells = result.cells.filter((cell) => cell.strategy === files.strategy && cell.durabilityOutcome);
  const torn = cells.reduce(
    (sum, cell) => sum + cell.durabilityOutcome!.counts.tornFiles + cell.durabilityOutcome!.counts.indexMismatches,
    0,
  );
  const lost = cells.reduce((sum, cell) => sum + cell.durabilityOutcome!.counts.lostUpdates, 0);
  const crashes = cells.reduce(
    (sum, cell) => sum + cell.durabilityOutcome!.crashes.filter((crash) => crash.reached).length,
    0,
  );
  // Signed gaps said as "fewer"/"more" (a negative cost read "files cost -26 tokens").
  const tokenGap = stores.length ? Math.round(files.contextPerTurn - stores[0]!.contextPerTurn) : 0;
  const msGap = stores.length ? files.loadSaveP95 - stores[0]!.loadSaveP95 : 0;
  const recallGap = stores.length
    ? Number(((files.contextRecall.value ?? 0) - (stores[0]!.contextRecall.value ?? 0)).toFixed(2))
    : 0;
  return [
    pick(lang, {
      en: `Markdown files behind a MEMORY.md index (file-index) recall ${f2(files.contextRecall.value)}${ci(files)} at ${tokens(files)} tokens per turn with a load+save p95 of ${files.loadSaveP95.toFixed(1)} ms${stores.length ? `; the SQLite-backed ${stores.map((row) => `${row.setting} ${f2(row.contextRecall.value)} at ${tokens(row)} tokens, p95 ${row.loadSaveP95.toFixed(1)} ms`).join('; ')}` : ''} [leaderboard].`,
      zh: `用 MEMORY.md 索引加 Markdown 文件（file-index）的召回率为 ${f2(files.contextRecall.value)}${ci(files)}，每轮 ${tokens(files)} 个 token，读写 p95 为 ${files.loadSaveP95.toFixed(1)} 毫秒${stores.length ? `；基于 SQLite 的 ${stores.map((row) => `${row.setting} 为 ${f2(row.contextRecall.value)}、${tokens(row)} 个 token、p95 ${row.loadSaveP95.toFixed(1)} 毫秒`).join('；')}` : ''} [排行榜]。`,
    }),
    cells.length
      ? pick(lang, {
          en: `Files need locking and atomic renames to survive crashes and concurrent writers: after ${crashes} real crashes file-index had ${torn} torn files or index mismatches and lost ${lost} concurrent updates [durability].`,
          zh: `文件要靠加锁和原子重命名才能扛住崩溃和并发写：经过 ${crashes} 次真实崩溃，file-index 出现 ${torn} 个损坏文件或索引不一致，丢失 ${lost} 次并发更新 [耐久性]。`,
        })
      : pick(lang, {
          en: 'This run crashed no file-index cell, so it says nothing about torn files.',
          zh: '本次没有让 file-index 崩溃，所以不能说明文件损坏的情况。',
        }),
    ...(stores.length
      ? [
          pick(lang, {
            en: `So on this run, files take ${Math.abs(tokenGap)} ${tokenGap < 0 ? 'fewer' : 'more'} tokens per turn than ${stores[0]!.setting}, at a load+save p95 ${Math.abs(msGap).toFixed(1)} ms ${msGap < 0 ? 'lower' : 'higher'}, for ${recallGap === 0 ? 'the same recall' : `a recall ${f2(Math.abs(recallGap))} ${recallGap < 0 ? 'lower' : 'higher'}`} [leaderboard]; what files buy — memory people and the agent can read and edit — is not something this run measures.`,
            zh: `所以在本次运行里，文件相对 ${stores[0]!.setting} 每轮${tokenGap < 0 ? '少' : '多'} ${Math.abs(tokenGap)} 个 token、读写 p95 ${msGap < 0 ? '少' : '多'} ${Math.abs(msGap).toFixed(1)} 毫秒，${recallGap === 0 ? '召回率相同' : `召回率${recallGap < 0 ? '低' : '高'} ${f2(Math.abs(recallGap))}`} [排行榜]；文件换来的好处（人和智能体都能直接读改）不在本次测量之内。`,
          }),
        ]
      : []),
  ];
}

function syncOrAsync(lang: Language, prices: readonly ModePrice[]): string[] {
  const modes = ['sync', 'async', 'exit', 'none'].filter((mode) =>
    prices.some((price) => price.durability === mode && price.idempotencyKeys),
  );
  if (modes.length < 2)
    return [
      pick(lang, {
        en: 'This run priced fewer than two durability modes: the default run, or `--durability sync,async,exit,none` on a crash scenario, answers it.',
        zh: '本次只测了不到两种耐久模式：默认运行，或在崩溃场景上加 `--durability sync,async,exit,none`，才能回答。',
      }),
    ];
  const figure = (mode: string) => {
    const rows = prices.filter((price) => price.durability === mode && price.idempotencyKeys);
    const p50 = [...rows.map((price) => price.saveP50)].sort((a, b) => a - b)[Math.floor((rows.length - 1) / 2)] ?? 0;
    return {
      mode,
      p50,
      acks: rows.reduce((sum, price) => sum + price.losses.acknowledgedLost + price.losses.lostUpdates, 0),
      messages: rows.reduce((sum, price) => sum + price.losses.messagesLost, 0),
      crashes: rows.reduce((sum, price) => sum + price.crashes, 0),
      strategies: rows.length,
    };
  };
  const figures = modes.map(figure);
  const out = figures.map((item) =>
    pick(lang, {
      en: `${item.mode}: median save ${item.p50.toFixed(2)} ms per turn over ${item.strategies} strategies; ${item.acks} acknowledged memories and ${item.messages} messages lost over ${item.crashes} crashes [sync-or-async table].`,
      zh: `${item.mode}：${item.strategies} 个策略的保存时间中位数为每轮 ${item.p50.toFixed(2)} 毫秒；${item.crashes} 次崩溃中丢失 ${item.acks} 条已确认的记忆和 ${item.messages} 条消息 [同步/异步表]。`,
    }),
  );
  const sync = figures.find((item) => item.mode === 'sync');
  const lossy = figures
    .filter((item) => item.mode !== 'sync' && item.acks + item.messages > 0)
    .map((item) => item.mode);
  out.push(
    sync && sync.acks + sync.messages === 0 && lossy.length
      ? pick(lang, {
          en: `Write synchronously whatever the user was told is remembered: only sync lost nothing here, while ${lossy.join(', ')} lost acknowledged memories. Work that can be rebuilt from durable history (a summary, an embedding) can go to the background.`,
          zh: `凡是已经告诉用户“记住了”的内容都要同步写：本次只有 sync 没有丢失，而 ${lossy.join('、')} 都丢了已确认的记忆。可以从持久化历史重建的工作（摘要、向量）可以放到后台。`,
        })
      : pick(lang, {
          en: 'No mode lost an acknowledged memory in this run, so it cannot show what synchronous writing protects; the save latencies above are its price.',
          zh: '本次没有任何模式丢失已确认的记忆，因此看不出同步写保护了什么；上面的保存延迟就是它的代价。',
        }),
  );
  return out;
}

/** Every answer in one language, from the run's own figures. */
export function explainRun(result: RunResult, lang: Language): Answer[] {
  const rows = leaderboards(result)[0]!.board.rows;
  const distance = distanceTables(result).find((table) => table.unit === 'exchanges')?.rows ?? [];
  const traits = traitsFrom(result);
  const answers: [Answer['id'], string[]][] = [
    ['window-k', windowK(lang, result, rows, distance, traits)],
    ['summary-loses', summaryLoses(lang, rows, result.header.offlineModel, result, traits)],
    ['vector-vs-rag', vectorVsRag(lang, result, rows, distance, result.header.embedder, traits)],
    ['files-or-database', filesOrDatabase(lang, rows, result, traits)],
    ['sync-or-async', syncOrAsync(lang, result.durabilityPrices)],
  ];
  return answers.map(([id, sentences]) => ({ id, question: QUESTIONS[id][lang], sentences }));
}

/** The answers as Markdown: a heading per question (report.md, and `membench explain`). */
export function renderExplainMarkdown(result: RunResult, languages: readonly Language[] = ['en', 'zh']): string {
  const lines: string[] = [];
  for (const lang of languages) {
    lines.push(lang === 'en' ? '## Interview answers from this run' : '## 用本次运行的数据回答面试题', '');
    if (result.header.offlineModel)
      lines.push(
        lang === 'en'
          ? '_Answers, summaries and extracted memories come from the offline reference model._'
          : '_回答、摘要和抽取的记忆都来自离线参考模型。_',
        '',
      );
    for (const answer of explainRun(result, lang))
      lines.push(
        `### ${answer.question}`,
        '',
        ...answer.sentences.map((sentence) => `- ${markdownLine(sentence)}`),
        '',
      );
  }
  return lines.join('\n');
}
