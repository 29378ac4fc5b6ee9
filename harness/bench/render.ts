/**
 * The bench report as Markdown tables: readable in a terminal and pasted as is into README.
 * Pure: report in, text out.
 */
import { turnFloorMs, rememberFloorMs, type Floors } from './floors.js';
import type { BenchReport } from './index.js';
import type { SaveLoadResult, SaveLoadRow } from './save-load.js';
import {
  FLAT_RATIO,
  flatExempt,
  flatRatio,
  floorRatio,
  heldNearFloor,
  missBy,
  NEAR_FLOOR_RATIO,
  RECOVERY_RATIO,
  rememberRatio,
  SUITE_FLOOR_RATIO,
  VECTOR_TARGET,
  type Target,
} from './targets.js';
import type { RecoveryResult } from './recovery.js';
import type { Timing } from './measure.js';
import type { VersusResult, VersusRun } from './versus-langchain.js';
import type { SuiteResult } from './suite.js';
import { renderAa } from './aa.js';
import type { DatasetScaleResult } from './dataset-scale.js';
import { HOSTILE_TARGET_RATIO, PLAIN, type HostileTextResult } from './hostile-text.js';
import { PROTOCOL_TARGET_RATIO, type CellSpread, type ProtocolBenchResult } from './protocol.js';
import type { VectorScaleResult } from './vector-scale.js';

/** Milliseconds with the precision that matters at their size. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return '–';
  if (ms < 1) return `${ms.toFixed(3)} ms`;
  if (ms < 100) return `${ms.toFixed(2)} ms`;
  return `${ms.toFixed(0)} ms`;
}

const count = (value: number): string => Math.round(value).toLocaleString('en-US');
const ops = (timing: Timing): string => count(timing.opsPerSec);
const percent = (share: number): string => `${(share * 100).toFixed(share < 0.1 ? 1 : 0)}%`;
const times = (ratio: number): string =>
  !Number.isFinite(ratio) ? '–' : ratio < 0.1 ? `${ratio.toPrecision(2)}×` : `${ratio.toFixed(2)}×`;
const verdict = (pass: boolean | null, ratio?: number, limit?: number): string =>
  pass === null
    ? '—'
    : pass
      ? 'PASS'
      : ratio !== undefined && limit !== undefined
        ? `MISS (${(ratio / limit).toFixed(1)}× over)`
        : 'MISS';

/** A Markdown table with columns padded to their widest cell. */
export function markdownTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((cells) => (cells[column] ?? '').length), 3),
  );
  const line = (cells: readonly string[]): string =>
    `| ${cells.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ')} |`;
  return [line(headers), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

function renderFloors(floors: Floors): string {
  const row = (name: string, timing: Timing, note = ''): string[] => [
    name,
    formatMs(timing.p50Ms),
    formatMs(timing.p99Ms),
    ops(timing),
    note,
  ];
  const table = markdownTable(
    ['floor', 'p50', 'p99', 'ops/s', 'note'],
    [
      row(
        'tiktoken `encode`, short message',
        floors.tokenEncode,
        `${times(floors.tokenEncode.p50Ms / floors.tokenEncodeOrdinary.p50Ms)} encode_ordinary`,
      ),
      row('tiktoken `encode_ordinary`, short message', floors.tokenEncodeOrdinary, floors.encoding),
      row(
        'bpe.ts count, short message',
        floors.tokenCount,
        `${times(floors.tokenCount.p50Ms / floors.tokenEncodeOrdinary.p50Ms)} encode_ordinary; what TokenCounter uses (same counts)`,
      ),
      row('encoder load: tiktoken (WebAssembly)', floors.tiktokenLoad, 'paid once per process'),
      row(
        'encoder load: bpe.ts',
        floors.bpeLoad,
        `${times(floors.bpeLoad.p50Ms / floors.tiktokenLoad.p50Ms)} tiktoken's; what every agent process pays`,
      ),
      row(
        'SQLite commit, WAL + synchronous=FULL',
        floors.sqliteCommitFull,
        `${times(floors.sqliteCommitFull.p50Ms / floors.sqliteCommitNormal.p50Ms)} NORMAL; survives a power cut`,
      ),
      row(
        'SQLite commit, WAL + synchronous=NORMAL',
        floors.sqliteCommitNormal,
        'survives a process crash, not a power cut',
      ),
      row('atomic durable file write', floors.atomicFileWrite, 'temp + fsync + rename + fsync of the dir'),
      row(
        `hnswlib top-5, ${count(floors.vectors)} × d=${floors.dimensions}, ef=${floors.ef}`,
        floors.hnswTop5,
        `${times(floors.bruteForceTop5.p50Ms / floors.hnswTop5.p50Ms)} faster than brute force`,
      ),
      row(
        `brute-force top-5, ${count(floors.vectors)} × d=${floors.dimensions}`,
        floors.bruteForceTop5,
        `crossover ≈ ${count(floors.crossoverVectors)} vectors`,
      ),
      row('fork + SIGKILL + reopen SQLite', floors.forkKillReopen, 'one simulated crash and recovery'),
    ],
  );
  return [
    '## Floors',
    '',
    table,
    '',
    `Per-turn floor: a turn saves two messages, so 2 × (encode_ordinary + FULL commit) = ${formatMs(turnFloorMs(floors, 'commit'))}; ` +
      `one \`remember\`: encode_ordinary + atomic file write = ${formatMs(rememberFloorMs(floors))}.`,
  ].join('\n');
}

function renderSaveLoad(saveLoad: SaveLoadResult): string {
  const rows = saveLoad.rows.map((row) => {
    const ratio = floorRatio(row);
    const judged = heldNearFloor(row.strategy);
    return [
      row.strategy,
      `${count(row.size)} (${count(row.historyFrom)}–${count(row.historyTo)})`,
      formatMs(row.turn.p50Ms),
      formatMs(row.turn.p99Ms),
      ops(row.turn),
      formatMs(row.saveP50Ms),
      formatMs(row.loadP50Ms),
      percent(row.modelShare + row.embedShare),
      row.tokenizerCallsPerTurn.toFixed(1),
      row.modelCallsPerTurn.toFixed(2),
      `${row.commitsPerTurn.toFixed(1)}${row.fileSyncsPerTurn > 0 ? ` + ${row.fileSyncsPerTurn.toFixed(1)} fsyncs` : ''}`,
      count(row.contextTokens),
      formatMs(row.floorP50Ms),
      times(ratio),
      judged ? verdict(ratio <= NEAR_FLOOR_RATIO, ratio, NEAR_FLOOR_RATIO) : '—',
    ];
  });
  const parts = [
    '## save + load per turn',
    '',
    'A turn is what the agent loop does: save the user message, load the context, save the reply (sync durability, offline model, hashed embedder). ' +
      'p50 / p99 / ops/s exclude model and embedder time (their share of the wall time is shown); save and load p50 are wall time. ' +
      '× floor divides the p50 by the floor sampled between the same turns: 2 × (encode_ordinary of a short message + one durable write), ' +
      'the write being a FULL SQLite commit, or an atomic file write for file-index (it writes memory files every turn). ' +
      `History: the nominal length, then the stored turns during the ${Object.values(saveLoad.turnsPerSize).join(' / ')} measured turns (plus warmup). ` +
      'Commits/turn: SQLite commits counted from the WAL (each an fsync in sync mode), plus fsyncs of atomic file writes; two (one per message) is the floor.',
    '',
    markdownTable(
      [
        'strategy',
        'history',
        'p50',
        'p99',
        'ops/s',
        'save p50',
        'load p50',
        'model %',
        'tok calls/turn',
        'model calls/turn',
        'commits/turn',
        'context tokens',
        'floor p50',
        '× floor',
        `≤ ${NEAR_FLOOR_RATIO}×`,
      ],
      rows,
    ),
  ];
  const strategies = [...new Set(saveLoad.rows.map((row) => row.strategy))];
  const flatRows = strategies.flatMap((strategy) => {
    const flat = flatRatio(saveLoad.rows.filter((row) => row.strategy === strategy));
    if (!flat) return [];
    const exempt = flatExempt(strategy);
    const at = (item: SaveLoadRow): string =>
      `${formatMs(item.turn.p50Ms)} = ${times(floorRatio(item))} floor @ ${count(item.size)}`;
    return [
      [
        strategy,
        at(flat.from),
        at(flat.to),
        times(flat.rawRatio),
        times(flat.ratio),
        exempt ? 'exempt' : verdict(flat.ratio <= FLAT_RATIO, flat.ratio, FLAT_RATIO),
      ],
    ];
  });
  if (flatRows.length > 0) {
    parts.push(
      '',
      '### Flat in history length',
      '',
      "The ratio judged divides each p50 by the floor sampled between the same turns, so a change in the machine's load between the two measurements cancels out; the raw ratio is shown beside it.",
      '',
      markdownTable(
        ['strategy', 'p50 (small history)', 'p50 (large history)', 'raw ratio', 'ratio over floor', `≤ ${FLAT_RATIO}×`],
        flatRows,
      ),
    );
  }
  if (saveLoad.remember.length > 0) {
    const rememberRows = saveLoad.remember.map((row) => {
      const ratio = rememberRatio(row);
      return [
        row.strategy,
        count(row.size),
        count(row.memories),
        formatMs(row.timing.p50Ms),
        formatMs(row.timing.p99Ms),
        ops(row.timing),
        formatMs(row.floorP50Ms),
        times(ratio),
        verdict(ratio <= NEAR_FLOOR_RATIO, ratio, NEAR_FLOOR_RATIO),
      ];
    });
    parts.push(
      '',
      `### remember (one new memory, sync; one memory per ${saveLoad.rememberEvery} prefilled turns)`,
      '',
      markdownTable(
        ['strategy', 'history', 'memories', 'p50', 'p99', 'ops/s', 'floor p50', '× floor', `≤ ${NEAR_FLOOR_RATIO}×`],
        rememberRows,
      ),
    );
  }
  return parts.join('\n');
}

function renderVersus(versus: VersusResult): string {
  if (versus.skipped) return `## Against LangChain\n\nskipped: ${versus.skipped}`;
  const rows = versus.pairs.flatMap((pair) => {
    const line = (run: VersusRun): string[] => [
      run.strategy,
      run.durability,
      run.turnsPlayed < versus.turns ? `${count(run.turnsPlayed)} (time budget)` : count(run.turnsPlayed),
      formatMs(run.turn.p50Ms),
      formatMs(run.turn.meanMs),
      times(run.commonMeanMs / pair.langchain.commonMeanMs),
      formatMs(run.withoutModelP50Ms),
      count(run.modelCalls),
      percent(run.modelShare),
      run.limit.kind === 'tokens' ? `${count(run.limit.value)} tokens` : `k=${run.limit.value}`,
      count(run.maxContextTokens),
      count(run.meanContextTokens),
      run.limit.kind === 'tokens' ? `${run.turnsOverLimit} turns` : `${run.maxEarlierExchanges} earlier exchanges`,
    ];
    return [...pair.ours.map(line), line(pair.langchain)];
  });
  const common = versus.pairs.map((pair) => `${pair.title}: ${count(pair.commonTurns)}`).join('; ');
  return [
    `## Against LangChain (${count(versus.turns)}-turn conversation, one process, same offline model and token counter)`,
    '',
    `Per-turn wall time, model calls included. "vs LangChain" compares mean time per turn over the turns every run of the pair played (${common}).`,
    '',
    markdownTable(
      [
        'memory',
        'durability',
        'turns',
        'p50/turn',
        'mean/turn',
        'vs LangChain',
        'p50 w/o model',
        'model calls',
        'model %',
        'limit',
        'max context',
        'mean context',
        'over limit',
      ],
      rows,
    ),
  ].join('\n');
}

function renderVector(vector: VectorScaleResult): string {
  const table = markdownTable(
    ['figure', 'value', 'target'],
    [
      [
        'vectors × dimensions',
        `${count(vector.count)} × ${vector.dimensions} (cosine, M=${vector.m}, efConstruction=${vector.efConstruction})`,
        '',
      ],
      ['build time', formatMs(vector.buildMs), ''],
      ['index size on disk', `${(vector.indexBytes / 1024 / 1024).toFixed(1)} MiB`, ''],
      ['exact search (JS full scan), per query', formatMs(vector.exactMeanMs), ''],
      ['ef (smallest reaching the recall target)', String(vector.ef), ''],
      [`recall@${vector.k}`, vector.recall.toFixed(3), `≥ ${VECTOR_TARGET.recall}`],
      [
        `top-${vector.k} p50 / p99`,
        `${formatMs(vector.search.p50Ms)} / ${formatMs(vector.search.p99Ms)} (${ops(vector.search)} ops/s)`,
        `< ${VECTOR_TARGET.p50Ms} ms`,
      ],
    ],
  );
  const trials = vector.trials
    .map((trial) => `ef=${trial.ef}: recall ${trial.recall.toFixed(3)}, ${formatMs(trial.meanMs)}`)
    .join('; ');
  return [`## Vector store at ${count(vector.count)} memories`, '', table, '', `ef tuning: ${trials}.`].join('\n');
}

function renderRecovery(recovery: RecoveryResult, floors: Floors | undefined): string {
  const floor = floors?.forkKillReopen.p50Ms;
  const rows = recovery.rows.map((row) => {
    const ratio = floor === undefined ? NaN : row.p50Ms / floor;
    return [
      row.strategy,
      count(row.crashes),
      formatMs(row.p50Ms),
      formatMs(row.maxMs),
      floor === undefined ? '–' : formatMs(floor),
      times(ratio),
      floor === undefined || row.crashes === 0 ? '—' : verdict(ratio <= RECOVERY_RATIO, ratio, RECOVERY_RATIO),
      `${count(row.processes)} × ${formatMs(row.processCpuMsEach)}`,
      formatMs(row.spareWaitMs),
    ];
  });
  const lines = [
    `## Crash + recovery (${recovery.scenario}, agent processes, one cell at a time)`,
    '',
    "Per reached crash: from the armed step's request to the fresh process opened on the same dir and its invariants checked (the kill, the exit, the reopen, the checks). " +
      'A crash is armed only once a warm spare waits, so no process start is in it; what the starts cost is in the last two columns (CPU until ready, and the time the cell waited for spares).',
    '',
    markdownTable(
      [
        'strategy',
        'crashes',
        'p50',
        'max',
        'fork floor p50',
        '× floor',
        `≤ ${RECOVERY_RATIO}×`,
        'processes × CPU to start',
        'waited for spares',
      ],
      rows,
    ),
  ];
  if (recovery.errors.length > 0) lines.push('', 'Cells that failed:', ...recovery.errors.map((error) => `- ${error}`));
  return lines.join('\n');
}

function renderSuite(suite: SuiteResult & { complete: boolean }): string {
  const { phases } = suite;
  // Starts are counted once per process (at its first open); `processes` counts opens, reused processes included.
  const started = suite.snapshot.starts + suite.snapshot.otherStarts;
  const perProcess = (ms: number): string => (started > 0 ? `${formatMs(ms / started)} per process` : '–');
  const lines = [
    `## Offline suite${suite.complete ? '' : ' (quick: in-process scenarios only)'}`,
    '',
    markdownTable(
      ['figure', 'value'],
      [
        [
          'scenarios × strategies',
          `${suite.scenarios.length} × ${suite.strategies.length} = ${suite.cells} cells (${suite.errors.length} errors)`,
        ],
        [
          'command',
          `${suite.command}${suite.workers === null ? '' : ` -w ${suite.workers}`} (timed from its start to its exit, reports and charts included)`,
        ],
        ['turns', count(suite.turns)],
        [
          'wall time',
          `${(suite.wallMs / 1000).toFixed(1)} s = ${suite.floorRatio.toFixed(0)}× the fork + SIGKILL + reopen floor of ${suite.forkFloorMs.toFixed(0)} ms measured beside it (target ≤ ${SUITE_FLOOR_RATIO}×): planning + cells ${(suite.cellsMs / 1000).toFixed(1)} s, the rest ${((suite.wallMs - suite.cellsMs) / 1000).toFixed(1)} s (Node's start, reports, charts)`,
        ],
        [
          'CPU (user + system, whole process tree)',
          suite.cpuMs === null
            ? '– (not measured on this OS)'
            : `${(suite.cpuMs / 1000).toFixed(1)} s${suite.cpuFloorRatio === null ? '' : ` = ${suite.cpuFloorRatio.toFixed(0)}× the floor's CPU of ${suite.forkFloorCpuMs!.toFixed(0)} ms a fork (a reading beside the judged wall ratio: load inflates a lone fork's wall time more than its CPU)`}`,
        ],
        ['throughput', `${suite.turnsPerSec.toFixed(0)} turns/s`],
        [
          "strategies' own save + load",
          `${(suite.strategyMs / 1000).toFixed(2)} s (${percent(suite.strategyMs / suite.wallMs)} of wall)`,
        ],
        ['agent processes killed at crash points', count(suite.crashes)],
        [
          'agent processes forked / started / opens',
          `${count(phases.forked)} / ${count(started)} / ${count(phases.processes)} for ${count(phases.processCells)} cells (a cleanly closed process serves the next open; forked and never started: warm spares no cell opened)`,
        ],
        [
          '… started from the startup snapshot',
          `${count(suite.snapshot.starts)} of ${count(started)}${suite.snapshot.warning ? ' (see the warning below)' : ''}`,
        ],
        [
          '… Node start / module loading + tokenizer / CPU until ready',
          `${perProcess(phases.processStartMs)} / ${perProcess(phases.moduleLoadMs)} / ${perProcess(phases.processCpuMs)}`,
        ],
        ['… waiting for spares, summed over cells', formatMs(phases.spareWaitMs)],
        [
          'crash + recovery, median per crash',
          phases.crashes > 0 ? `${formatMs(phases.recoveryP50Ms)} (${count(phases.crashes)} crashes)` : '–',
        ],
        [
          'strategy open / replay / checks / close, summed over cells',
          `${formatMs(phases.openMs)} / ${formatMs(phases.replayMs)} / ${formatMs(phases.checkMs)} / ${formatMs(phases.closeMs)}`,
        ],
        ...suite.byMode.map((phase) => [phase.name, `${(phase.ms / 1000).toFixed(1)} s in ${phase.cells} cells`]),
        ...suite.byScenario.map((phase) => [`scenario ${phase.name}`, `${(phase.ms / 1000).toFixed(1)} s`]),
      ],
    ),
  ];
  if (suite.snapshot.warning) lines.push('', `Warning: ${suite.snapshot.warning}.`);
  if (suite.errors.length > 0) lines.push('', 'Cells that failed:', ...suite.errors.map((error) => `- ${error}`));
  return lines.join('\n');
}

function renderDataset(dataset: DatasetScaleResult): string {
  const rows = dataset.rows.map((row) => [
    row.strategy,
    `${row.questions}${row.errors > 0 ? ` (${row.errors} errors)` : ''}`,
    `${(row.wallMs / 1000).toFixed(1)} s`,
    `${(row.cpuMs / 1000).toFixed(1)} s`,
    formatMs(row.msPerQuestion),
    formatMs(row.msPerMessage),
    times(row.floorRatio),
    `${row.peakRssMb} MB`,
  ]);
  return [
    `## Dataset scale (synthetic LongMemEval_S shape: ${count(dataset.questions)} questions, ${count(dataset.sessions)} sessions, ${count(dataset.messages)} messages, ${dataset.fileMb.toFixed(0)} MB)`,
    '',
    '`membench run --dataset longmemeval:FILE -s STRATEGY` in this process, one cell at a time (import, replay, probes; no reports). ' +
      `The floor writes and indexes every message (SQLite row + FTS5, one fsynced commit per session) of ${dataset.floor.questions} questions: ` +
      `${formatMs(dataset.floor.msPerQuestion)} per question, ${formatMs(dataset.floor.msPerMessage)} per message. CPU is this process's user + system time, the steadier figure on a loaded machine.`,
    '',
    markdownTable(
      ['strategy', 'questions', 'wall', 'CPU', 'wall / question', 'wall / message', '× floor', 'peak RSS'],
      rows,
    ),
    '',
    `Extrapolated (not measured): these ${dataset.rows.length} strategies over all ${count(dataset.fullFile.questions)} questions would take ${dataset.fullFile.cpuMinutes.toFixed(1)} CPU minutes, ` +
      `${dataset.fullFile.wallMinutes.toFixed(1)} minutes on ${dataset.fullFile.cores} idle cores (one worker each; import and reports aside; target for all nine: 15 minutes).`,
  ].join('\n');
}

function renderHostile(hostile: HostileTextResult): string {
  const { worst } = hostile;
  const perKind = hostile.rows.find((row) => row.kind !== PLAIN)?.questions ?? 0;
  const plainQuestions = hostile.rows.find((row) => row.kind === PLAIN)?.questions ?? 0;
  return [
    `## Hostile text (one ${count(hostile.chars)}-character message per question)`,
    '',
    '`membench run --dataset longmemeval:FILE --protocol longmemeval -s bm25` in this process, one cell at a time, after a warm-up question (not counted) that loads what a process loads once; ' +
      `each row is the median over a kind's ${perKind} questions (each with a text of its own; ${plainQuestions} without a hostile message) of a question's four cells (both units, both rankers) summed, and of its slowest cell. ` +
      `Worst question ${formatMs(worst.questionMs)} (${worst.kind}) against the median question without a hostile message, ${formatMs(hostile.medianQuestionMs)}: ` +
      `${times(hostile.ratio)} (target ≤ ${HOSTILE_TARGET_RATIO}×); in CPU ${times(hostile.cpuRatio)} (median question ${formatMs(hostile.medianQuestionCpuMs)} of CPU). ` +
      `Per cell: the slowest ${times(hostile.cellRatio)} the median cell (${formatMs(hostile.medianCellMs)}), in CPU ${times(hostile.cellCpuRatio)}; ` +
      "a question's first cell segments its messages for the other three, so a plain question's own first cell is already about 2× the median cell.",
    '',
    markdownTable(
      ['message', 'question', '× median', 'question CPU', '× median CPU', 'slowest cell', '× median cell'],
      hostile.rows.map((row) => [
        row.kind,
        formatMs(row.questionMs),
        times(row.questionMs / Math.max(hostile.medianQuestionMs, 1e-9)),
        formatMs(row.questionCpuMs),
        times(row.questionCpuMs / Math.max(hostile.medianQuestionCpuMs, 1e-9)),
        formatMs(row.cellMs),
        times(row.cellMs / Math.max(hostile.medianCellMs, 1e-9)),
      ]),
    ),
  ].join('\n');
}

/** The slowest cell against the median cell. */
const spreadRatio = (spread: CellSpread): string =>
  spread.medianMs > 0 ? `${times(spread.maxMs / spread.medianMs)} the median` : 'no median';

function renderProtocol(protocol: ProtocolBenchResult): string {
  return [
    `## Protocol run (${count(protocol.questions)} LongMemEval_S-shaped questions)`,
    '',
    '`membench run --dataset longmemeval:FILE --protocol longmemeval -s bm25` in this process (both units, both rankers: ' +
      `${count(protocol.cells)} cells, ${count(protocol.rankingOnly)} ranking only, ${count(protocol.errors)} errors), against its floor in the same process: ` +
      'read the file, then per question and setting tokenize the user turns with the same ranker, index them and rank every document. ' +
      `Both are measured warm: the run after a one-question run (not counted; ${formatMs(protocol.run.warmUpCpuMs)} of CPU, what a process loads and compiles once), the floor after a warm-up question.`,
    '',
    markdownTable(
      ['', 'CPU / question', 'wall / question', 'median cell', 'slowest cell'],
      [
        [
          'protocol run',
          formatMs(protocol.run.cpuMsPerQuestion),
          formatMs(protocol.run.wallMsPerQuestion),
          formatMs(protocol.run.medianCellMs),
          formatMs(protocol.run.maxCellMs),
        ],
        ['floor', formatMs(protocol.floor.cpuMsPerQuestion), '', '', ''],
      ],
    ),
    '',
    `The run takes ${times(protocol.ratio)} its floor's CPU (target ≤ ${PROTOCOL_TARGET_RATIO}×).`,
    '',
    `Through the pool (${protocol.pooled.workers} worker processes, as \`membench run\` runs it): ${count(protocol.pooled.cells)} cells, ` +
      `${count(protocol.pooled.scenariosSent)} copies of a question sent to the workers (one per question and worker, not one per cell); ` +
      `cell CPU median ${formatMs(protocol.pooled.cpu.medianMs)}, slowest ${formatMs(protocol.pooled.cpu.maxMs)} (${spreadRatio(protocol.pooled.cpu)}, ${count(protocol.pooled.cpu.above5x)} above 5×); ` +
      `cell wall median ${formatMs(protocol.pooled.wall.medianMs)}, slowest ${formatMs(protocol.pooled.wall.maxMs)} (${spreadRatio(protocol.pooled.wall)}, ${count(protocol.pooled.wall.above5x)} above 5×)` +
      (protocol.pooled.thread
        ? `; each cell's own thread on a CPU: median ${formatMs(protocol.pooled.thread.medianMs)}, slowest ${formatMs(protocol.pooled.thread.maxMs)} (${spreadRatio(protocol.pooled.thread)}, ${count(protocol.pooled.thread.above5x)} above 5×), so ${count(protocol.pooled.thread.waitedAbove5x)} of the cells above 5× in wall time waited for a CPU rather than worked.`
        : '.'),
  ].join('\n');
}

function renderTargets(targets: readonly Target[]): string {
  const value = (item: Target): string =>
    item.unit === 'x'
      ? times(item.value)
      : item.unit === 'ms'
        ? formatMs(item.value)
        : item.unit === 's'
          ? `${item.value.toFixed(1)} s`
          : item.unit === 'tokens'
            ? count(item.value)
            : item.value.toFixed(3);
  const limit = (item: Target): string =>
    `${item.comparison} ${item.unit === 'x' ? `${item.limit}×` : item.unit === 'ms' ? `${item.limit} ms` : item.unit === 's' ? `${item.limit} s` : String(item.limit)}`;
  const rows = targets.map((item) => [
    item.what,
    value(item),
    limit(item),
    item.pass === null ? '—' : item.pass ? 'PASS' : `MISS (${missBy(item)})`,
    item.note ?? '',
  ]);
  const judged = targets.filter((item) => item.pass !== null);
  return [
    `## Targets: ${judged.filter((item) => item.pass).length} of ${judged.length} met`,
    '',
    markdownTable(['target', 'value', 'limit', 'result', 'note'], rows),
  ].join('\n');
}

/** The report as JSON (`--json`); `renderBenchReport` renders the same object as tables. */
export function renderBenchJson(report: BenchReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

/** The whole report as Markdown. */
export function renderBenchReport(report: BenchReport): string {
  const { header } = report;
  const parts = [
    `# membench bench${header.quick ? ' --quick' : ''}`,
    '',
    `${header.platform}, ${header.cpus} × ${header.cpuModel}, Node ${header.node}, tokenizer ${header.tokenizer}; ` +
      `load average ${header.loadAverage.start.toFixed(2)} → ${header.loadAverage.end.toFixed(2)} (other work on the machine makes timings noisy: compare figures from one run); ` +
      `took ${(header.durationMs / 1000).toFixed(0)} s.`,
  ];
  if (report.floors) parts.push('', renderFloors(report.floors));
  if (report.saveLoad) parts.push('', renderSaveLoad(report.saveLoad));
  if (report.recovery) parts.push('', renderRecovery(report.recovery, report.floors));
  if (report.langchain) parts.push('', renderVersus(report.langchain));
  if (report.vector) parts.push('', renderVector(report.vector));
  if (report.suite) parts.push('', renderSuite(report.suite));
  if (report.dataset) parts.push('', renderDataset(report.dataset));
  if (report.hostile) parts.push('', renderHostile(report.hostile));
  if (report.aa) parts.push('', renderAa(report.aa));
  if (report.protocol) parts.push('', renderProtocol(report.protocol));
  if (report.targets.length > 0) parts.push('', renderTargets(report.targets));
  return `${parts.join('\n')}\n`;
}
