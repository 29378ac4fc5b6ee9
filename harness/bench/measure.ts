/**
 * Timing primitives of `membench bench`: a tinybench run reduced to the figures the report
 * prints, and stopwatches around the model and the embedder so their time can be taken out of
 * a strategy's per-turn figure (docs/design.md §5: model time is reported separately).
 */
import { Bench, type FnReturnedObject } from 'tinybench';
import type { ChatModel, ChatRequest, ChatResponse, Embedder } from '../models/types.js';

/** One measured operation: milliseconds per call, and calls per second at the mean. */
export interface Timing {
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  opsPerSec: number;
  samples: number;
}

/** How long a tinybench task runs: at least `iterations` calls and `timeMs`, after `warmupIterations` unmeasured calls. */
export interface MeasureOptions {
  iterations: number;
  timeMs?: number;
  warmupIterations?: number;
  /** Stops the run early; the samples taken so far still count. */
  signal?: AbortSignal;
}

/** What a measured call may return: its own duration when only part of the call counts (tinybench's `overriddenDuration`). */
export type Measured = void | { durationMs: number };

/**
 * Runs `fn` under tinybench and returns its latency figures. When `fn` returns `{durationMs}`,
 * that duration is the sample (e.g. a turn without its model time); otherwise the call's wall time.
 * Errors propagate (a benchmark that fails is a bug to see, not a number).
 */
export async function measure(
  name: string,
  fn: () => Promise<Measured> | Measured,
  options: MeasureOptions,
): Promise<Timing> {
  const warmupIterations = options.warmupIterations ?? 0;
  const bench = new Bench({
    iterations: options.iterations,
    time: options.timeMs ?? 0,
    warmup: warmupIterations > 0,
    warmupIterations,
    warmupTime: 0,
    throws: true,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  bench.add(name, async (): Promise<FnReturnedObject | undefined> => {
    const outcome = await fn();
    return outcome ? { overriddenDuration: outcome.durationMs } : undefined;
  });
  const [task] = await bench.run();
  const result = task!.result;
  if (result.state !== 'completed' && result.state !== 'aborted-with-statistics')
    throw new Error(`benchmark "${name}" did not complete (${result.state})`);
  const { latency } = result;
  return {
    p50Ms: latency.p50,
    p99Ms: latency.p99,
    meanMs: latency.mean,
    opsPerSec: latency.mean > 0 ? 1000 / latency.mean : 0,
    samples: latency.samplesCount,
  };
}

/** Accumulated time and calls of one provider (the chat model or the embedder). */
export class Stopwatch {
  ms = 0;
  calls = 0;

  async time<T>(work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await work();
    } finally {
      this.ms += performance.now() - started;
      this.calls++;
    }
  }
}

/** A chat model that records the time spent in calls (metering included) on a stopwatch. */
export class TimedModel implements ChatModel {
  readonly id: string;
  readonly offline: boolean;

  constructor(
    private readonly inner: ChatModel,
    readonly watch: Stopwatch = new Stopwatch(),
  ) {
    this.id = inner.id;
    this.offline = inner.offline;
  }

  chat(request: ChatRequest): Promise<ChatResponse> {
    return this.watch.time(() => this.inner.chat(request));
  }
}

/** An embedder that records the time spent embedding on a stopwatch. */
export class TimedEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;

  constructor(
    private readonly inner: Embedder,
    readonly watch: Stopwatch = new Stopwatch(),
  ) {
    this.id = inner.id;
    this.dimensions = inner.dimensions;
  }

  embed(texts: readonly string[]): Promise<Float32Array[]> {
    return this.watch.time(() => this.inner.embed(texts));
  }
}
