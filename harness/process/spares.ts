/**
 * Warm spare agent processes, kept across cells: each is forked ahead of need, loads its modules
 * and warms its tokenizer while the harness does other work, so a recovery after a crash (or the
 * next cell's first process) starts in a process that is already up. A spare never opened a cell
 * and holds no state; one left over when a cell ends serves the next cell instead of being killed,
 * and so does a process a cell of a built-in strategy closed cleanly (returnSpare).
 * Idle spares do not keep the harness alive: when it exits, their IPC channel closes and they go.
 */
import { AgentProcess } from './agent-process.js';
import { findStrategy } from '../../strategies/index.js';
import { isLiveProvider } from '../models/index.js';
import type { PreloadHint } from '../../strategies/types.js';

/**
 * Spares kept ready per kind. One would do for one crash at a time, but crash scenarios crash every
 * few steps, sooner than a spare boots: with three booting side by side, a crash rarely waits
 * (measured on remember-then-crash + crash-mid-tool-call: 4.5 s of waiting, 29 s with one).
 */
export const SPARES_AHEAD = 3;

/**
 * What a spare is ready for: the cell's tokenizer model, whether its strategy is a built-in (the
 * bundled entry), and whether the cell is offline (a built-in strategy with the offline model and a
 * hashed embedder opens no connection: its processes start without TLS-only settings).
 */
export interface SpareKind {
  tokenizerModel: string;
  builtin: boolean;
  offline: boolean;
}

/** The kind of spare a cell needs. */
export function spareKind(cell: {
  tokenizerModel: string;
  strategy: string;
  model: string;
  embedder: string;
}): SpareKind {
  const builtin = findStrategy(cell.strategy) !== undefined;
  return {
    tokenizerModel: cell.tokenizerModel,
    builtin,
    offline: builtin && !isLiveProvider(cell.model) && !isLiveProvider(cell.embedder),
  };
}

const kindKey = (kind: SpareKind): string =>
  `${kind.builtin ? 'builtin' : 'any'}:${kind.offline ? 'offline' : 'online'}:${kind.tokenizerModel}`;

/** Idle spares of this process, by kind. */
const idle = new Map<string, AgentProcess[]>();

/**
 * Cells needing agent processes that the pool has not handed to any worker yet, as it last said
 * (setQueuedAgentCells); undefined where no pool says (a run in one process, a test): more may come.
 */
let queuedAgentCells: number | undefined;

/** The pool's count of cells needing agent processes that no worker has been handed yet (undefined: unknown). */
export function setQueuedAgentCells(count: number | undefined): void {
  queuedAgentCells = count;
}

/**
 * Spares to keep ahead for a cell that may still start `need` processes after the one it runs in:
 * SPARES_AHEAD, but no more than that need plus one for each cell still queued (any of them may
 * come to this worker). Near a run's end this stops forking spares no cell will open: each worker
 * used to end the run with its last three never opened.
 */
function aheadFor(need: number): number {
  return Math.min(SPARES_AHEAD, need + (queuedAgentCells ?? SPARES_AHEAD));
}

/** Keeps `ahead` live spares of `kind` waiting (`SPARES_AHEAD` unless told fewer). */
function refill(kind: SpareKind, ahead = SPARES_AHEAD): AgentProcess[] {
  const key = kindKey(kind);
  const spares = (idle.get(key) ?? []).filter((spare) => spare.alive);
  while (spares.length < ahead) {
    const spare = AgentProcess.spawn({
      tokenizerModel: kind.tokenizerModel,
      builtinOnly: kind.builtin,
      offline: kind.offline,
    });
    spare.hold(false);
    spares.push(spare);
  }
  idle.set(key, spares);
  return spares;
}

/**
 * A spare of `kind` (the oldest, so the likeliest to be ready), and new ones forked behind it up to
 * what is kept ahead (aheadFor the cell's `need`: how many more processes it may start, one per kill
 * still armed; unknown, as many as ever), unless the caller will hand it back (`returning`: a
 * concurrent step's session, which closes cleanly and serves on through returnSpare; a replacement
 * forked for each would be killed as surplus when they come back). The caller owns the process:
 * it opens a cell in it, closes or kills it.
 */
export function takeSpare(
  kind: SpareKind,
  { returning = false, need = Number.POSITIVE_INFINITY }: { returning?: boolean; need?: number } = {},
): AgentProcess {
  const spare = refill(kind, 1).shift()!;
  if (!returning) refill(kind, aheadFor(need));
  spare.hold(true);
  return spare;
}

/**
 * Waits until the next spare of `kind` is ready (a crash armed after this recovers in a warm
 * process) and has preloaded what the strategy loads lazily for the cell's text; every idle spare
 * of the kind is told to preload it too, so the ones behind are ready for the next crashes.
 * `need`: the processes the cell may still start, this crash's recovery included (see takeSpare).
 * Resolves with how long the wait took, 0 when the spare was ready already.
 */
export async function spareReady(
  kind: SpareKind,
  preload?: { strategy: string; hint: PreloadHint },
  need = Number.POSITIVE_INFINITY,
): Promise<number> {
  const spares = refill(kind, Math.max(1, aheadFor(need)));
  // What the strategy always loads (an addon), every idle spare loads; what this crash's text needs
  // (a dictionary) only the spare that will recover it: the next crash may need none.
  if (preload)
    spares.forEach((spare, index) => void spare.prepare(preload.strategy, index === 0 ? preload.hint : { cjk: false }));
  const next = spares[0]!;
  if (next.boot && (!preload || next.prepared)) return 0;
  const started = performance.now();
  // Waiting counts as holding: the event loop must not exit under a cell that waits on it.
  next.hold(true);
  await next.settled();
  next.hold(false);
  return next.alive ? performance.now() - started : 0;
}

/**
 * Takes back a process a cell closed cleanly with `reuse` (AgentProcess.close), to serve the next
 * cell of the kind first: it is up and warm, and the spare it saves is never forked. Only for
 * built-in strategies, whose modules keep no state of a cell (test/harness/process/reuse.test.ts
 * checks each): a user's module might. Anything else is closed for good. Resolves once settled.
 */
export async function returnSpare(kind: SpareKind, agent: AgentProcess): Promise<void> {
  if (!kind.builtin || !agent.alive || !agent.reusable) {
    await agent.kill();
    return;
  }
  agent.hold(false);
  const key = kindKey(kind);
  const spares = [agent, ...(idle.get(key) ?? [])];
  // Sessions that ran side by side come back together: more than one ahead of need is waste.
  const surplus = spares.splice(SPARES_AHEAD + 1);
  idle.set(key, spares);
  await Promise.all(surplus.map((spare) => spare.kill()));
}

/** Kills every idle spare (tests, and programs that want no child left behind); resolves with how many it killed. */
export async function killSpares(): Promise<number> {
  const spares = [...idle.values()].flat();
  idle.clear();
  await Promise.all(spares.map((spare) => spare.kill()));
  return spares.length;
}
