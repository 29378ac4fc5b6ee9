/**
 * Per-turn cost of each strategy's `save` + `load` at growing history lengths, through the real
 * strategy API. The history is prefilled quickly (durability `exit`: everything in memory,
 * written once on close), then the strategy is reopened in `sync`, as a user runs it, and agent
 * turns are measured with tinybench. Model and embedder time are measured on the side and taken
 * out of the figure the targets use; their share is reported. Counters (tokenizer, model and
 * embedder calls per turn) show the complexity without trusting a clock.
 */
import { rm } from 'node:fs/promises';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import type { MemoryStrategy, StrategyDefinition } from '../../strategies/types.js';
import { DurableWriteCounter } from '../core/commit-count.js';
import { distribution } from '../core/metrics.js';
import type { FillerExchange } from '../scenarios/filler.js';
import { FloorProbe, type FloorWrite } from './floors.js';
import { measure, type Timing } from './measure.js';
import { conversation, makeRig, playTurn, type Rig, type TurnTiming } from './rig.js';
import { benchTempDir } from './scratch.js';

/** What to measure and how much of it. */
export interface SaveLoadOptions {
  definitions: readonly StrategyDefinition[];
  /** History lengths (stored turns) at which turns are measured, ascending. */
  sizes: readonly number[];
  /** Measured turns at a history length (the history grows by one per measured turn). */
  turnsAt: (size: number) => number;
  /** Unmeasured turns before each measurement. */
  warmupTurns: number;
  /** Strategies with explicit memory get one `remember` every this many prefilled turns. */
  rememberEvery: number;
  /** Measured `remember` calls per history length (strategies with explicit memory); 0 skips. */
  rememberSamples: number;
  /** The durable write of each strategy's floor (default: a durable file write for a strategy whose definition's `storage` is `files`, a SQLite commit otherwise). */
  floorWrite?: (strategy: string) => FloorWrite;
  onProgress?: (line: string) => void;
}

/** One strategy at one history length. */
export interface SaveLoadRow {
  strategy: string;
  /** Stored turns when the measurement began and when it ended (warmup and measured turns included). */
  historyFrom: number;
  historyTo: number;
  /** The nominal history length asked for. */
  size: number;
  /** Per agent turn (save user + load + save reply), model and embedder time excluded. */
  turn: Timing;
  /** Per turn, wall time (model and embedder included). */
  wallP50Ms: number;
  wallP99Ms: number;
  saveP50Ms: number;
  loadP50Ms: number;
  /** Share of the turns' wall time spent in the chat model (offline, metering included) and in the embedder. */
  modelShare: number;
  embedShare: number;
  tokenizerCallsPerTurn: number;
  modelCallsPerTurn: number;
  embedCallsPerTurn: number;
  /** Durable writes per measured turn, counted: SQLite commits (from the WAL) and fsyncs of atomic file writes. */
  commitsPerTurn: number;
  fileSyncsPerTurn: number;
  /** Tokens of the context the last measured turn loaded. */
  contextTokens: number;
  /** Time to reopen the strategy on its dir at this history length (after the prefill). */
  reopenMs: number;
  /** p50 of the per-turn floor sampled between the measured turns: 2 × (token count + durable write). */
  floorP50Ms: number;
  /** The durable write of that floor: a FULL SQLite commit, or an atomic file write. */
  floorWrite: FloorWrite;
}

/** `remember` of one new memory (strategies with explicit memory) at one history length. */
export interface RememberRow {
  strategy: string;
  size: number;
  /** Memories stored before the measured calls. */
  memories: number;
  timing: Timing;
  tokenizerCallsPerCall: number;
  /** p50 of the `remember` floor sampled between the measured calls (token count + atomic file write). */
  floorP50Ms: number;
}

/** Everything the save/load benchmark measured. */
export interface SaveLoadResult {
  rows: SaveLoadRow[];
  remember: RememberRow[];
  turnsPerSize: Record<number, number>;
  rememberEvery: number;
}

const rememberContent = (index: number, exchange: FillerExchange): string => `Note ${index}: ${exchange.user}`;

/** Plays the first `count` turns in durability `exit` (fast: written on close), with a `remember` every `rememberEvery` turns when supported. */
async function prefill(
  rig: Rig,
  turns: readonly FillerExchange[],
  count: number,
  rememberEvery: number,
): Promise<number> {
  const strategy = rig.create('exit');
  await strategy.open();
  let memories = 0;
  for (let turn = 1; turn <= count; turn++) {
    const exchange = turns[turn - 1]!;
    await playPrefillTurn(strategy, turn, exchange);
    if (strategy.remember && turn % rememberEvery === 0) {
      await strategy.remember({ content: rememberContent(turn, exchange) });
      memories++;
    }
  }
  await strategy.close();
  return memories;
}

/** A prefill turn saves both messages; its load is skipped (loads change no state, and buffer's would copy the history). */
async function playPrefillTurn(strategy: MemoryStrategy, turn: number, exchange: FillerExchange): Promise<void> {
  await strategy.save({ message: new HumanMessage(exchange.user), turn });
  await strategy.save({ message: new AIMessage(exchange.assistant), turn });
}

/**
 * Measures one strategy at one history length, in a fresh dir: prefill in `exit`, reopen in
 * `sync`. (Each size starts afresh: some stores cannot go back to `exit` once `sync` wrote them.)
 */
async function benchSize(
  definition: StrategyDefinition,
  size: number,
  options: SaveLoadOptions,
  turns: readonly FillerExchange[],
  probe: FloorProbe,
): Promise<{ row: SaveLoadRow; remember?: RememberRow }> {
  const rig = await makeRig(definition);
  try {
    options.onProgress?.(`save-load: ${definition.name}: prefilling ${size} turns`);
    const memories = await prefill(rig, turns, size, options.rememberEvery);
    const reopenStarted = performance.now();
    const strategy = rig.create('sync');
    await strategy.open();
    const reopenMs = performance.now() - reopenStarted;
    let history = size;
    const records: (TurnTiming & { encodeCalls: number; floorMs: number; commits: number; fileSyncs: number })[] = [];
    const writes = new DurableWriteCounter(rig.dir);
    const modelCallsBefore = rig.model.watch.calls;
    const embedCallsBefore = rig.embedder.watch.calls;
    const warmup = options.warmupTurns;
    // A strategy persisting to files (file-index writes memory files every turn) is compared with a durable file write.
    const floorWrite = options.floorWrite?.(definition.name) ?? (definition.storage === 'files' ? 'file' : 'commit');
    const turnTiming = await measure(
      `${definition.name}@${size}`,
      async () => {
        history++;
        const encodeBefore = rig.tokens.encodeCalls;
        const timing = await playTurn(strategy, rig, history, turns[history - 1]!);
        const encodeCalls = rig.tokens.encodeCalls - encodeBefore;
        // Counted outside the timed part of the turn (the floor probe writes in a dir of its own).
        const { commits, fileSyncs } = writes.take();
        records.push({ ...timing, encodeCalls, commits, fileSyncs, floorMs: await probe.turn(floorWrite) });
        writes.take(); // the probe's own fsyncs are not the strategy's
        return { durationMs: Math.max(0, timing.saveMs + timing.loadMs - timing.modelMs - timing.embedMs) };
      },
      { iterations: options.turnsAt(size), warmupIterations: warmup },
    );
    const measured = records.slice(warmup);
    // Model and embedder calls are counted over warmup and measured turns alike: per turn they are exact on average.
    const played = records.length;
    const wall = distribution(measured.map((record) => record.saveMs + record.loadMs));
    const wallTotal = measured.reduce((sum, record) => sum + record.saveMs + record.loadMs, 0);
    const row: SaveLoadRow = {
      strategy: definition.name,
      size,
      historyFrom: size,
      historyTo: history,
      turn: turnTiming,
      wallP50Ms: wall.p50,
      wallP99Ms: wall.p99,
      saveP50Ms: distribution(measured.map((record) => record.saveMs)).p50,
      loadP50Ms: distribution(measured.map((record) => record.loadMs)).p50,
      modelShare: wallTotal > 0 ? measured.reduce((sum, record) => sum + record.modelMs, 0) / wallTotal : 0,
      embedShare: wallTotal > 0 ? measured.reduce((sum, record) => sum + record.embedMs, 0) / wallTotal : 0,
      tokenizerCallsPerTurn: measured.reduce((sum, record) => sum + record.encodeCalls, 0) / measured.length,
      modelCallsPerTurn: (rig.model.watch.calls - modelCallsBefore) / played,
      embedCallsPerTurn: (rig.embedder.watch.calls - embedCallsBefore) / played,
      commitsPerTurn: measured.reduce((sum, record) => sum + record.commits, 0) / measured.length,
      fileSyncsPerTurn: measured.reduce((sum, record) => sum + record.fileSyncs, 0) / measured.length,
      contextTokens: rig.tokens.countMessages(measured.at(-1)!.messages),
      reopenMs,
      floorP50Ms: distribution(measured.map((record) => record.floorMs)).p50,
      floorWrite,
    };
    const remember =
      strategy.remember && options.rememberSamples > 0
        ? await benchRemember(definition.name, strategy, rig, size, memories, options.rememberSamples, probe)
        : undefined;
    await strategy.close();
    options.onProgress?.(
      `save-load: ${definition.name} @ ${size}: p50 ${turnTiming.p50Ms.toFixed(3)} ms/turn (model excluded)`,
    );
    return { row, ...(remember ? { remember } : {}) };
  } finally {
    await rig.dispose();
  }
}

/** `remember` of a new memory per call, in `sync` (acknowledged once durable), with a floor sample after each. */
async function benchRemember(
  name: string,
  strategy: MemoryStrategy,
  rig: Rig,
  size: number,
  memories: number,
  samples: number,
  probe: FloorProbe,
): Promise<RememberRow> {
  let index = 0;
  const floor: number[] = [];
  const encodeBefore = rig.tokens.encodeCalls;
  const timing = await measure(
    `${name} remember@${size}`,
    async () => {
      index++;
      const started = performance.now();
      await strategy.remember!({
        content: `Benchmark memory ${size}-${index}: the user's locker code is ${1000 + index}.`,
      });
      const durationMs = performance.now() - started;
      floor.push(await probe.remember());
      return { durationMs };
    },
    { iterations: samples },
  );
  return {
    strategy: name,
    size,
    memories,
    timing,
    tokenizerCallsPerCall: (rig.tokens.encodeCalls - encodeBefore) / samples,
    floorP50Ms: distribution(floor).p50,
  };
}

/** Runs the save/load benchmark for every strategy, one after the other. */
export async function benchSaveLoad(options: SaveLoadOptions): Promise<SaveLoadResult> {
  const sizes = [...new Set(options.sizes)].sort((a, b) => a - b);
  const largest = sizes.at(-1)!;
  const turns = conversation(largest + options.turnsAt(largest) + options.warmupTurns);
  const result: SaveLoadResult = {
    rows: [],
    remember: [],
    turnsPerSize: Object.fromEntries(sizes.map((size) => [size, options.turnsAt(size)])),
    rememberEvery: options.rememberEvery,
  };
  const probeDir = await benchTempDir('membench-bench-probe-');
  const probe = new FloorProbe(probeDir);
  try {
    for (const definition of options.definitions) {
      for (const size of sizes) {
        const { row, remember } = await benchSize(definition, size, options, turns, probe);
        result.rows.push(row);
        if (remember) result.remember.push(remember);
      }
    }
  } finally {
    probe.close();
    await rm(probeDir, { recursive: true, force: true });
  }
  return result;
}
