/**
 * The agent process's entry (it exports nothing): a strategy plus the agent loop, driven over IPC by the harness. An armed
 * crash point kills it with SIGKILL — no `finally`, no flush — and the harness starts a fresh one
 * on the same dir, which reopens what was persisted and resumes from the journal.
 */
import { existsSync, readdirSync } from 'node:fs';
import { startupSnapshot } from 'node:v8';
import type { AgentSession, Ack } from '../agent/loop.js';
import { containsAny, contextText } from '../core/metrics.js';
import {
  createEmbedder,
  createModel,
  emptyUsage,
  usageDelta,
  type MeteredModel,
  type ModelUsage,
} from '../models/index.js';
import { loadStrategyDefinition } from '../../strategies/loader.js';
import { builtinStrategies } from '../../strategies/index.js';
import { icuWords, normalizeText } from '../core/text.js';
import { bpeStats } from '../core/bpe.js';
import { TokenCounter } from '../core/tokens.js';
import { openCellSession, replayRun, type CellSession } from './cell-session.js';
import {
  SNAPSHOT_CHECK,
  type AgentBoot,
  type CheckReport,
  type FromAgent,
  type ToAgent,
  type AgentCell,
} from './protocol.js';
import type { CrashPoint, Step } from '../scenarios/format.js';
import type { MemoryStrategy } from '../../strategies/types.js';
import { thrownText } from '../agent/strategy-contract.js';
import { errorMessage } from '../core/errors.js';
import { stdoutToStderr } from '../core/stdout-to-stderr.js';

function send(message: FromAgent): Promise<void> {
  return new Promise((resolve, reject) => {
    if (!process.send) return reject(new Error('membench agent process: not started with an IPC channel'));
    process.send(message, undefined, {}, (error) => (error ? reject(error) : resolve()));
  });
}

/** Open file descriptors of this process (a SQLite store left open holds some), where the system lists them. */
const openFiles = (): number | null => (existsSync('/proc/self/fd') ? readdirSync('/proc/self/fd').length : null);

/** Texts the strategy holds, normalised; falls back to what load() returns for each query. */
async function persistedText(
  strategy: MemoryStrategy,
  queries: readonly string[],
): Promise<(needle: string) => boolean> {
  if (strategy.snapshot) {
    const text = normalizeText((await strategy.snapshot()).join('\n'));
    return (needle) => containsAny(text, [needle]);
  }
  const contexts = new Map<string, string>();
  for (const query of queries) contexts.set(query, contextText((await strategy.load({ query, turn: 0 })).messages));
  return (needle) => containsAny(contexts.get(needle) ?? '', [needle]);
}

/** The agent process's state: one session of one cell, driven by the harness's messages. */
class AgentHost {
  /** The strategy of the last cell opened here, as the user named it (an uncaught exception names it). */
  strategy: string | undefined;
  /** The id of the last cell opened here: it leads what the strategy prints (stdoutToStderr). */
  cellId: string | undefined;
  /**
   * Set by an exception nothing awaited (a strategy's timer that throws): the process's state is not
   * to be trusted, so every request after it is answered with this error, until the harness kills it.
   */
  broken: string | undefined;
  private session: AgentSession | undefined;
  /** The open cell's session with its ledger and journal. */
  private cell: CellSession | undefined;
  private model: MeteredModel | undefined;
  private armed: CrashPoint | undefined;
  private reported = { turns: 0, probes: 0, recoveries: 0, latencies: 0 };
  private usageReported: ModelUsage = emptyUsage();

  async handle(message: ToAgent): Promise<void> {
    switch (message.type) {
      case 'open':
        return this.open(message.cell, message.resumeTurn, message.resumeSession);
      case 'arm':
        this.armed = message.point;
        return;
      case 'prepare':
        // A hint only: if the strategy will not load, `open` says so.
        await loadStrategyDefinition(message.strategy).then(
          (definition) => definition.preload?.(message.hint),
          () => undefined,
        );
        if (message.hint.cjk) icuWords('我家只有一口铸铁锅'); // ICU's segmenter and its CJK dictionary, before the step that needs them
        return send({ type: 'prepared' });
      case 'step':
        return this.step(message.index, [message.step]);
      case 'batch':
        return this.step(message.from, message.steps);
      case 'check':
        return send({ type: 'checked', report: await this.check(message.acks, message.userTexts) });
      case 'close': {
        await this.session?.finish();
        this.cell?.close();
        const usage = usageDelta(this.model?.usage ?? emptyUsage(), this.usageReported);
        // Reused, the process forgets the cell: the next `open` builds every object afresh from disk.
        if (message.reuse) this.forget();
        await send({ type: 'closed', usage });
        if (!message.reuse) process.exit(0);
        return;
      }
      case 'inspect':
        return send({
          type: 'inspected',
          resources: [...process.getActiveResourcesInfo()].sort(),
          openFiles: openFiles(),
          env: { ...process.env },
        });
    }
  }

  /** Drops every object of the closed cell (session, strategy, journal, ledger, model, what was reported). */
  private forget(): void {
    this.session = undefined;
    this.cell = undefined;
    this.model = undefined;
    this.armed = undefined;
    this.reported = { turns: 0, probes: 0, recoveries: 0, latencies: 0 };
    this.usageReported = emptyUsage();
  }

  private checkpoint = (point: CrashPoint): void => {
    if (this.armed === point) process.kill(process.pid, 'SIGKILL');
  };

  private async open(cell: AgentCell, resumeTurn: number, resumeSession: number): Promise<void> {
    this.strategy = cell.strategy;
    this.cellId = cell.cellId;
    const definition = await loadStrategyDefinition(cell.strategy);
    const cache = cell.cache ? { file: cell.cache.file, trial: cell.cache.trial } : false;
    const opened = openCellSession({
      dir: cell.dir,
      definition,
      source: cell.strategy,
      options: cell.options,
      durability: cell.durability,
      seed: cell.seed,
      tokenizerModel: cell.tokenizerModel,
      model: createModel(cell.model, { ...cell.live, cache }),
      embedder: createEmbedder(cell.embedder, { ...cell.live, cache }),
      ...(cell.clock !== undefined ? { clock: cell.clock } : {}),
      ...(cell.scenario !== undefined ? { scenario: cell.scenario } : {}),
      ...(cell.scoring !== undefined ? { scoring: cell.scoring } : {}),
      datasetReplay: cell.datasetReplay ?? false,
      resumable: {
        sessionId: cell.sessionId,
        idempotencyKeys: cell.idempotencyKeys,
        checkpoint: this.checkpoint,
        onAck: (ack: Ack) => send({ type: 'ack', ack }),
      },
    });
    this.cell = opened;
    this.model = opened.model;
    this.session = opened.session;
    this.session.resumeAtTurn(resumeTurn, resumeSession);
    await this.session.start();
    await send({ type: 'opened', pendingJobs: this.session.current?.pendingJobs?.() ?? null });
  }

  /** Runs `steps` (from index `from` on: one step, or a durable batch of saved turns) and reports their records. */
  private async step(from: number, steps: readonly Step[]): Promise<void> {
    const session = this.session!;
    await replayRun(session, steps, from);
    const index = from + steps.length - 1;
    this.armed = undefined;
    const { turns, probes, recoveries } = this.reported;
    const usage = this.model!.usage;
    await send({
      type: 'step-done',
      index,
      turns: session.turns.slice(turns),
      probes: session.probes.slice(probes),
      recoveries: session.recoveries.slice(recoveries),
      usage: usageDelta(usage, this.usageReported),
      modelLatencies: this.model!.latencies.slice(this.reported.latencies),
      pendingJobs: session.current?.pendingJobs?.() ?? null,
      maxRssKb: process.resourceUsage().maxRSS,
    });
    this.reported = {
      turns: session.turns.length,
      probes: session.probes.length,
      recoveries: session.recoveries.length,
      latencies: this.model!.latencies.length,
    };
    this.usageReported = { ...usage };
  }

  private async check(acks: readonly Ack[], userTexts: readonly string[]): Promise<CheckReport> {
    const strategy = this.session!.current!;
    // A later memory of the same name replaces an earlier one: only the latest ack per name must survive.
    const latest = [...new Map(acks.map((ack) => [ack.name ?? `#${ack.step}:${ack.content}`, ack])).values()];
    const holds = await persistedText(strategy, [...latest.map((ack) => ack.content), ...userTexts]);
    return {
      lostAcks: latest.filter((ack) => !holds(ack.content)).map((ack) => ack.content),
      lossy: strategy.capabilities.lossy === true,
      lostUserTexts: userTexts.filter((text) => !holds(text)),
      store: strategy.verify ? await strategy.verify() : null,
      pendingJobs: strategy.pendingJobs?.() ?? null,
    };
  }
}

/**
 * Every module above is loaded by now. A spare process waits for its cell: meanwhile it pays the
 * tokenizer's start-up cost (the model is the harness's guess: its argument),
 * so a recovery after a kill does not, and says it is ready with what its start cost.
 */
function start(from: AgentBoot['from']): void {
  const modulesLoadedAt = performance.now();
  const bootstrapAt = performance.nodeTiming.bootstrapComplete;
  const ranksBefore = bpeStats.ranksRead;
  new TokenCounter(process.argv[2] ?? 'offline').countText('warm-up');
  // No word segmenter to warm: Latin text is cut without ICU, and ICU with its CJK dictionary is
  // loaded by `prepare` with cjk, before the first step with Chinese text.
  const cpu = process.cpuUsage();
  void send({
    type: 'ready',
    boot: {
      from,
      bootMs: bootstrapAt,
      modulesMs: modulesLoadedAt - bootstrapAt,
      warmUpMs: performance.now() - modulesLoadedAt,
      ranksRead: bpeStats.ranksRead - ranksBefore,
      cpuMs: (cpu.user + cpu.system) / 1000,
    },
  }).catch(() => undefined);

  const host = new AgentHost();
  // The strategy's console.log goes to stderr, led by the cell's id: membench's stdout is its own.
  stdoutToStderr(() => host.cellId ?? 'agent process');
  const sendError = (message: string): Promise<void> => send({ type: 'error', message }).catch(() => undefined);
  // Said once to the request waiting for a reply (if any); every later request gets it too (`broken`). No stack on stderr.
  const uncaught = (what: string, error: unknown): void => {
    if (host.broken !== undefined) return;
    host.broken = `${what} in strategy ${host.strategy ?? '(none opened)'}: ${thrownText(error)}`;
    void sendError(host.broken);
  };
  process.on('uncaughtException', (error) => uncaught('uncaught exception', error));
  process.on('unhandledRejection', (reason) => uncaught('unhandled promise rejection', reason));
  let queue = Promise.resolve();
  process.on('message', (message: ToAgent) => {
    // Messages are handled one at a time, in order.
    queue = queue
      .then(() => (host.broken === undefined ? host.handle(message) : sendError(host.broken)))
      .catch(async (error: unknown) => {
        await sendError(errorMessage(error));
      });
  });
  process.on('disconnect', () => process.exit(0));
}

// Built into a startup snapshot (agent-snapshot.cts), the modules are evaluated once, at build
// time, and every process deserialized from it starts here; otherwise the process starts now.
// `--snapshot-check` (the harness's one test of a snapshot before it uses it) exits once deserialized.
// The snapshot also holds the default encoding's ranks (cl100k_base, ~2.6 MB): read from disk at
// every start, they cost each process ~6 ms of CPU; deserialized with the rest, under 1 ms.
if (startupSnapshot.isBuildingSnapshot()) {
  new TokenCounter('offline').countText('warm-up');
  // zod compiles a schema's parser on its first parse: parsed here, each built-in strategy's options
  // parser is in the snapshot, not compiled again in every process (~4 ms of CPU each).
  for (const definition of builtinStrategies) definition.options.parse({});
  startupSnapshot.setDeserializeMainFunction(() =>
    process.argv[2] === SNAPSHOT_CHECK ? process.exit(0) : start('snapshot'),
  );
} else start(import.meta.url.endsWith('.cjs') ? 'bundle' : 'modules');
