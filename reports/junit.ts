/**
 * junit.xml for CI test views: one testsuite per scenario, one testcase per cell; a scenario group
 * (a dataset file, a generated suite) is one testsuite with one testcase per strategy setting,
 * pooled over its scenarios. A case fails when a cell errored, violated an invariant, or (with a
 * threshold) recalled too little or scored no probe at all.
 */
import { assertRunResult } from '../harness/results/read.js';
import { cellsByStatus } from '../harness/results/cells.js';
import { invariantName, type CellResult, type RunResult } from '../harness/results/schema.js';
import { violatedInvariants } from '../harness/results/durability-matrix.js';
import { emptyShardWords } from '../harness/results/shard.js';
import { cellLabel, errorText, formatMs, formatRate, refusedSteps } from './summary.js';

/** What makes a cell fail besides errors and invariant violations. */
export interface VerdictOptions {
  /** A cell whose context recall is below this share fails; unset means recall never fails a cell. */
  recallThreshold?: number;
}

/** Why a cell passed or failed, shared by junit.xml and the GitHub step summary. */
export interface CellVerdict {
  error?: string;
  /** One line per failed check. */
  failures: string[];
  /** Supporting lines (missed probes, violation counts). */
  details: string[];
}

export function cellVerdict(cell: CellResult, options: VerdictOptions = {}): CellVerdict {
  const failures: string[] = [];
  const details: string[] = [];
  // Only `sync` promises what the invariants check; in async, exit and none modes the losses are
  // the price of the mode, counted in the durability matrix rather than failed.
  for (const outcome of cell.durability === 'sync' ? violatedInvariants(cell) : []) {
    failures.push(
      `invariant "${invariantName(outcome.invariant)}" violated ${outcome.violations} time(s)${outcome.checked ? ` in ${outcome.checked} check(s)` : ''}`,
    );
    details.push(...outcome.details.map((line) => `invariant ${outcome.invariant}: ${line}`));
  }
  // A stored item the strategy could not read was left out of every context: a loss, told by name.
  if (cell.unreadable?.length) {
    failures.push(
      `the strategy could not read ${cell.unreadable.length} stored item(s) and left them out: ${cell.unreadable.slice(0, 3).join('; ')}`,
    );
    details.push(...cell.unreadable.map((item) => `unreadable: ${item}`));
  }
  // An error cell has no recall to judge: its error is the verdict.
  if (cell.status === 'error') return { error: errorText(cell), failures, details };
  const recall = cell.recall.contextRecall;
  const empty = emptyRecallFailure(recall.n, cell.probes.length, options);
  if (empty) failures.push(empty);
  if (options.recallThreshold !== undefined && recall.value !== null && recall.value < options.recallThreshold) {
    failures.push(`context recall ${formatRate(recall)} is below the threshold ${options.recallThreshold.toFixed(2)}`);
    for (const probe of cell.probes.filter((item) => item.contextRecall === false)) {
      details.push(
        `missed: step ${probe.step}${probe.id ? ` [${probe.id}]` : ''} (${probe.category}): ${probe.question}`,
      );
    }
  }
  return { failures, details };
}

/**
 * The recall gate on an empty measurement (DESIGN §9): with a threshold, 0 probes scored for context
 * recall (an errata file that dropped every question, only abstention probes) fails, said in words,
 * instead of passing a threshold nothing was measured against.
 */
function emptyRecallFailure(scored: number, probes: number, options: VerdictOptions): string | undefined {
  if (options.recallThreshold === undefined || scored > 0) return undefined;
  const why =
    probes === 0
      ? 'the cell has no probe'
      : `none of its ${probes} probe${probes === 1 ? '' : 's'} has an expected answer (abstention only?)`;
  return `context recall: 0 probes scored (${why}): the threshold ${options.recallThreshold.toFixed(2)} cannot pass on an empty measurement`;
}

/**
 * The recall gate on a run of no cell at all (an empty shard): no cell fails, so without this the
 * threshold would pass on nothing (DESIGN §9). Undefined without a threshold or with a cell.
 */
export function emptyRunFailure(result: RunResult, options: VerdictOptions): string | undefined {
  if (options.recallThreshold === undefined || result.cells.length > 0) return undefined;
  const { shard } = result.header;
  const why = shard ? emptyShardWords(shard, shard.planned) : 'the run has no cell';
  return `context recall: 0 cells run: ${why}; the threshold ${options.recallThreshold.toFixed(2)} cannot pass on an empty measurement`;
}

/** True when the verdict fails the cell. */
export const verdictFails = (verdict: CellVerdict): boolean =>
  verdict.error !== undefined || verdict.failures.length > 0;

/** Characters XML 1.0 cannot carry at all (control characters, lone surrogates, U+FFFE/U+FFFF). */
const NOT_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** Text content: markup characters escaped, characters XML forbids replaced by U+FFFD. */
export function xmlText(text: string): string {
  return text.replace(NOT_XML, '\uFFFD').replace(/&/gu, '&amp;').replace(/</gu, '&lt;').replace(/>/gu, '&gt;');
}

/** Attribute values (double-quoted): also quotes and line breaks, which parsers would otherwise normalise away. */
export function xmlAttribute(text: string): string {
  return xmlText(text)
    .replace(/"/gu, '&quot;')
    .replace(/'/gu, '&apos;')
    .replace(/\n/gu, '&#10;')
    .replace(/\r/gu, '&#13;')
    .replace(/\t/gu, '&#9;');
}

const seconds = (ms: number): string => (Math.max(0, ms) / 1000).toFixed(3);

/** Unique within its scenario's testsuite: the no-keys twin of a cell and every trial get names of their own. */
function testcaseName(cell: CellResult, trials: number): string {
  return trials > 1 ? `${cellLabel(cell)} #t${cell.trial}` : cellLabel(cell);
}

function cellSummary(cell: CellResult): string {
  if (cell.status === 'error')
    return `cell ${cell.id} (seed ${cell.seed}, durability ${cell.durability})\nerror: ${errorText(cell)}`;
  return [
    `cell ${cell.id} (seed ${cell.seed}, durability ${cell.durability})`,
    `context tokens: total ${cell.tokens.contextTotal}, mean/turn ${Math.round(cell.tokens.contextMeanPerTurn)}, max ${cell.tokens.contextMax}; maintenance ${cell.tokens.maintenance}`,
    `context recall ${formatRate(cell.recall.contextRecall)}, stale exposure ${formatRate(cell.recall.staleExposure)}, answer accuracy ${formatRate(cell.recall.answerAccuracy)}`,
    `load p50 ${formatMs(cell.latency.loadMs.p50)} ms, p95 ${formatMs(cell.latency.loadMs.p95)} ms; save p50 ${formatMs(cell.latency.saveMs.p50)} ms, p95 ${formatMs(cell.latency.saveMs.p95)} ms`,
    `cache hits ${cell.usage.cachedCalls}; refused steps ${refusedSteps(cell)}`,
  ].join('\n');
}

function testcase(
  cell: CellResult,
  trials: number,
  options: VerdictOptions,
): { xml: string; failed: boolean; errored: boolean } {
  const verdict = cellVerdict(cell, options);
  const open = `    <testcase name="${xmlAttribute(testcaseName(cell, trials))}" classname="${xmlAttribute(cell.scenario)}" time="${seconds(cell.durationMs)}">`;
  const body: string[] = [];
  if (verdict.error !== undefined) {
    const extra = verdict.failures.length ? `\nalso: ${verdict.failures.join('; ')}` : '';
    body.push(
      `      <error message="${xmlAttribute(verdict.error)}" type="cell-error">${xmlText(`${verdict.error}${extra}`)}</error>`,
    );
  } else if (verdict.failures.length > 0) {
    const type = verdict.failures.some((line) => line.startsWith('invariant')) ? 'invariant' : 'recall';
    body.push(
      `      <failure message="${xmlAttribute(verdict.failures.join('; '))}" type="${type}">${xmlText([...verdict.failures, ...verdict.details].join('\n'))}</failure>`,
    );
  }
  body.push(`      <system-out>${xmlText(cellSummary(cell))}</system-out>`);
  return {
    xml: [open, ...body, '    </testcase>'].join('\n'),
    failed: verdict.error === undefined && verdict.failures.length > 0,
    errored: verdict.error !== undefined,
  };
}

/** One strategy setting over a group's cells: fails when any cell errored or violated, or the pooled recall is below the threshold. */
function groupTestcase(
  group: string,
  setting: string,
  cells: readonly CellResult[],
  options: VerdictOptions,
): { xml: string; failed: boolean; errored: boolean } {
  const verdicts = cells.map((cell) => ({
    cell,
    verdict: cellVerdict(cell, { ...options, recallThreshold: undefined }),
  }));
  const errored = verdicts.filter(({ verdict }) => verdict.error !== undefined);
  const failing = verdicts.filter(({ verdict }) => verdict.error === undefined && verdict.failures.length > 0);
  const { ok } = cellsByStatus(cells);
  const n = ok.reduce((sum, cell) => sum + cell.recall.contextRecall.n, 0);
  const hits = ok.reduce((sum, cell) => sum + cell.recall.contextRecall.hits, 0);
  const pooled = { n, hits, value: n ? hits / n : null };
  const failures = failing.map(({ cell, verdict }) => `${cell.scenario}: ${verdict.failures.join('; ')}`);
  const empty = emptyRecallFailure(
    n,
    ok.reduce((sum, cell) => sum + cell.probes.length, 0),
    options,
  );
  if (empty) failures.unshift(`pooled ${empty}`);
  if (options.recallThreshold !== undefined && pooled.value !== null && pooled.value < options.recallThreshold)
    failures.unshift(
      `pooled context recall ${formatRate(pooled)} is below the threshold ${options.recallThreshold.toFixed(2)}`,
    );
  const time = cells.reduce((sum, cell) => sum + cell.durationMs, 0);
  const body: string[] = [];
  if (errored.length) {
    const message = `${errored.length} of ${cells.length} scenario(s) errored, first: ${errored[0]!.cell.scenario}: ${errored[0]!.verdict.error}`;
    body.push(
      `      <error message="${xmlAttribute(message)}" type="cell-error">${xmlText(errored.map(({ cell, verdict }) => `${cell.scenario}: ${verdict.error}`).join('\n'))}</error>`,
    );
  } else if (failures.length) {
    body.push(
      `      <failure message="${xmlAttribute(failures.slice(0, 3).join('; '))}" type="${failing.length ? 'invariant' : 'recall'}">${xmlText(failures.join('\n'))}</failure>`,
    );
  }
  const summary = `${cells.length} scenario(s) of group ${group}; context recall ${formatRate(pooled)} pooled; context tokens ${ok.reduce((sum, cell) => sum + cell.tokens.contextTotal, 0)}; maintenance ${ok.reduce((sum, cell) => sum + cell.tokens.maintenance, 0)}`;
  body.push(`      <system-out>${xmlText(summary)}</system-out>`);
  return {
    xml: [
      `    <testcase name="${xmlAttribute(setting)}" classname="${xmlAttribute(group)}" time="${seconds(time)}">`,
      ...body,
      '    </testcase>',
    ].join('\n'),
    failed: !errored.length && failures.length > 0,
    errored: errored.length > 0,
  };
}

/** The whole junit.xml document. */
export function renderJunit(result: RunResult, options: VerdictOptions = {}): string {
  assertRunResult(result, 'renderJunit');
  const { header } = result;
  // Scenarios outside a group are suites of their own; a group's scenarios are one suite.
  const suitesOf = [
    ...new Map(
      result.cells.map((cell): [string, { kind: 'scenario' | 'group'; name: string }] =>
        cell.group === undefined
          ? [`s:${cell.scenario}`, { kind: 'scenario', name: cell.scenario }]
          : [`g:${cell.group}`, { kind: 'group', name: cell.group }],
      ),
    ).values(),
  ];
  const properties = [
    ['membench', header.membenchVersion],
    ['commit', header.gitCommit ?? ''],
    ['model', header.model],
    ['tokenizer', header.tokenizer.encoding],
    ['seed', String(header.seed)],
    ...(options.recallThreshold !== undefined ? [['recallThreshold', String(options.recallThreshold)]] : []),
  ];
  let tests = 0;
  let failures = 0;
  let errors = 0;
  const suites = suitesOf.map(({ kind, name: scenario }) => {
    const cells = result.cells.filter((cell) =>
      kind === 'group' ? cell.group === scenario : cell.group === undefined && cell.scenario === scenario,
    );
    const cases =
      kind === 'group'
        ? [...new Set(cells.map((cell) => cellLabel(cell)))].map((setting) =>
            groupTestcase(
              scenario,
              setting,
              cells.filter((cell) => cellLabel(cell) === setting),
              options,
            ),
          )
        : cells.map((cell) => testcase(cell, header.trials, options));
    const suiteFailures = cases.filter((item) => item.failed).length;
    const suiteErrors = cases.filter((item) => item.errored).length;
    tests += cases.length;
    failures += suiteFailures;
    errors += suiteErrors;
    const time = cells.reduce((sum, cell) => sum + cell.durationMs, 0);
    return [
      `  <testsuite name="${xmlAttribute(scenario)}" tests="${cases.length}" failures="${suiteFailures}" errors="${suiteErrors}" skipped="0" time="${seconds(time)}" timestamp="${xmlAttribute(header.startedAt.replace(/Z$/u, ''))}">`,
      '    <properties>',
      ...properties.map(
        ([name, value]) => `      <property name="${xmlAttribute(name!)}" value="${xmlAttribute(value!)}"/>`,
      ),
      '    </properties>',
      ...cases.map((item) => item.xml),
      '  </testsuite>',
    ].join('\n');
  });
  // A run of no cell has no testcase to fail: with a threshold, the gate is a failing testcase of its own.
  const empty = emptyRunFailure(result, options);
  if (empty !== undefined) {
    tests += 1;
    failures += 1;
    suites.push(
      [
        `  <testsuite name="membench" tests="1" failures="1" errors="0" skipped="0" time="0.000" timestamp="${xmlAttribute(header.startedAt.replace(/Z$/u, ''))}">`,
        `    <testcase name="recall threshold" classname="membench" time="0.000">`,
        `      <failure message="${xmlAttribute(empty)}" type="recall">${xmlText(empty)}</failure>`,
        '    </testcase>',
        '  </testsuite>',
      ].join('\n'),
    );
  }
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="membench" tests="${tests}" failures="${failures}" errors="${errors}" time="${seconds(header.durationMs)}">`,
    ...suites,
    '</testsuites>',
    '',
  ].join('\n');
}
