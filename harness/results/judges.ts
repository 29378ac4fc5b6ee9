/**
 * Judges of answer accuracy (docs/judging.md): `offline` (deterministic rules, the default) and
 * `openai:NAME` (an LLM over the OpenAI wire through the `openai` provider: retries, backoff,
 * timeouts, key masking), and the judging of a finished run's answers from its results. An LLM
 * judge asks at temperature 0 for a one-word reply, read strictly (`unparsed` otherwise, counted,
 * never a silent "no"); every reply goes through the response cache, and its tokens and requests
 * are counted apart from the memory's and the answerer's.
 */
import { HumanMessage } from '@langchain/core/messages';
import { MembenchError } from '../core/errors.js';
import { offlineVerdict, type JudgeItem } from './judge-rules.js';
import { TokenCounter } from '../core/tokens.js';
import { createModel, isLiveProvider, ResponseCache, type ChatModel, type ProviderOptions } from '../models/index.js';
import { judgedAccuracy, judgeLabel } from './agreement.js';
import { MAX_UNPARSED_SHARE } from './judge-limits.js';
import { okCells } from './cells.js';
import { fillPrompt, judgeItem, MEMBENCH_PROMPT_SET, type PromptSet } from './judge-prompts.js';
import type { JudgeRun, JudgeVerdict, Judgement, ProbeRecord, RunResult } from './schema.js';

/** Reply tokens an LLM judge may use: room for "yes" or "no" and a stray full stop. */
export const JUDGE_MAX_OUTPUT_TOKENS = 8;

/** A judge's reply read strictly: yes or no (any case, quotes, asterisks or a full stop around it); anything else is `unparsed`. */
export function parseVerdict(reply: string): JudgeVerdict {
  const word = reply
    .trim()
    .replace(/^["'*`_\s]+|["'*`_.!\s]+$/gu, '')
    .toLowerCase();
  return word === 'yes' ? 'yes' : word === 'no' ? 'no' : 'unparsed';
}

/** One judgement as a judge returns it, before it is filed under the judge's id. */
export interface JudgeReply {
  verdict: JudgeVerdict;
  raw: string;
  cached: boolean;
  /** Prompt + reply tokens (0 for the offline judge). */
  tokens: number;
}

export interface Judge {
  /** `offline` or `openai:NAME`: the key judgements are filed under. */
  readonly id: string;
  /** How judged figures are labelled: `offline judge`, `openai:NAME judge`. */
  readonly label: string;
  /** Where the prompts came from (`membench`, a file); the offline judge's rules are `membench rules`. */
  readonly prompts: string;
  /** Requests that reached the endpoint so far (cache hits excluded). */
  readonly requests: number;
  judge(item: JudgeItem): Promise<JudgeReply>;
}

/** The deterministic judge: no model, no request. */
export class OfflineJudge implements Judge {
  readonly id = 'offline';
  readonly label = judgeLabel('offline');
  readonly prompts = 'membench rules';
  readonly requests = 0;

  async judge(item: JudgeItem): Promise<JudgeReply> {
    const { correct, rule } = offlineVerdict(item);
    return { verdict: correct ? 'yes' : 'no', raw: rule, cached: false, tokens: 0 };
  }
}

/** An LLM judge over a chat model (`openai:NAME`, cached). */
export class ModelJudge implements Judge {
  readonly label: string;
  requests = 0;
  private readonly tokens: TokenCounter;

  constructor(
    private readonly model: ChatModel,
    private readonly promptSet: PromptSet,
  ) {
    this.label = judgeLabel(model.id);
    this.tokens = new TokenCounter(model.id.replace(/^openai:/u, ''));
  }

  get id(): string {
    return this.model.id;
  }

  get prompts(): string {
    return this.promptSet.source;
  }

  async judge(item: JudgeItem): Promise<JudgeReply> {
    const messages = [new HumanMessage(fillPrompt(this.promptSet.templates[item.type], item))];
    const response = await this.model.chat({ task: 'judge', messages, maxOutputTokens: JUDGE_MAX_OUTPUT_TOKENS });
    if (!response.cached) this.requests++;
    return {
      verdict: parseVerdict(response.text),
      raw: response.text,
      cached: response.cached,
      tokens: this.tokens.countMessages(messages) + this.tokens.countText(response.text),
    };
  }
}

/** What a judge is made from: its name, the prompts, and the provider settings of a live judge. */
export interface JudgeOptions {
  prompts?: PromptSet;
  /** Base URL, key, concurrency, timeout, retries; the temperature is always 0. */
  provider?: Omit<ProviderOptions, 'cache' | 'temperature'>;
  /** The response cache every live judgement goes through (`false`: none). */
  cache?: ResponseCache | false;
}

/** `offline` or `openai:NAME`. */
export function createJudge(judge: string, options: JudgeOptions = {}): Judge {
  if (judge === 'offline') return new OfflineJudge();
  if (!isLiveProvider(judge))
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `--judge ${judge}: expected "offline" or "openai:NAME" (e.g. openai:gpt-4o)`,
    );
  const model = createModel(judge, {
    ...options.provider,
    temperature: 0,
    ...(options.cache ? { cache: { store: options.cache } } : {}),
  });
  return new ModelJudge(model, options.prompts ?? MEMBENCH_PROMPT_SET);
}

const answeredProbe = (probe: ProbeRecord): probe is ProbeRecord & { answer: string } => probe.answer !== undefined;

/**
 * Judges every answer of a run with each judge in turn, and returns the run with the judgements
 * filed on its probes (a judge's earlier judgements replaced) and each judge's costs. The input is
 * not changed: a judge that fails (an endpoint down after its retries) leaves it as it was.
 */
export async function judgeRun(
  result: RunResult,
  judges: readonly Judge[],
  now: () => Date = () => new Date(),
): Promise<RunResult> {
  // Answerable probes of older files carry no gold: every judge would say no to every answer.
  const withoutGold = okCells(result.cells).flatMap((cell) =>
    cell.probes
      .filter((probe) => probe.category !== 'abstention' && probe.expect === undefined)
      .map((probe) => `${cell.id} step ${probe.step}`),
  );
  if (withoutGold.length > 0) {
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `these results hold no gold answers for ${withoutGold.length} probe${withoutGold.length === 1 ? '' : 's'} (first: ${withoutGold[0]}): they were written before membench stored gold with each answer; re-run the benchmark to judge it`,
    );
  }
  const judged: RunResult = structuredClone(result);
  for (const judge of judges) {
    const before = judge.requests;
    // A ranking-only cell generated no answer: nothing of it is judged.
    const probes = okCells(judged.cells).flatMap((cell) => cell.probes.filter(answeredProbe));
    const replies = await Promise.all(probes.map((probe) => judge.judge(judgeItem(probe))));
    probes.forEach((probe, index) => {
      const reply = replies[index]!;
      const judgement: Judgement = {
        judge: judge.id,
        verdict: reply.verdict,
        type: judgeItem(probe).type,
        raw: reply.raw,
        ...(reply.cached ? { cached: true } : {}),
      };
      probe.judgements = [...(probe.judgements ?? []).filter((other) => other.judge !== judge.id), judgement];
    });
    const run: JudgeRun = {
      judge: judge.id,
      label: judge.label,
      prompts: judge.prompts,
      judged: replies.length,
      unparsed: replies.filter((reply) => reply.verdict === 'unparsed').length,
      requests: judge.requests - before,
      cached: replies.filter((reply) => reply.cached).length,
      tokens: replies.reduce((sum, reply) => sum + reply.tokens, 0),
      judgedAt: now().toISOString(),
    };
    judged.judges = [...(judged.judges ?? []).filter((other) => other.judge !== judge.id), run];
  }
  return judged;
}

/** What a judging says beyond its figures: warnings for stderr, and the failures of the judge gate (`--judge-threshold`). */
export interface JudgeGate {
  warnings: string[];
  failures: string[];
}

/**
 * Checks what `judges` (the ones that just ran) measured: a judge that judged nothing, or could not
 * read more than MAX_UNPARSED_SHARE of its replies, is warned about, and with a `threshold` fails
 * (a gate never passes on an empty measurement, DESIGN §9), as does an accuracy below it.
 */
export function checkJudged(result: RunResult, judges: readonly string[], threshold?: number): JudgeGate {
  const gate: JudgeGate = { warnings: [], failures: [] };
  const probes = okCells(result.cells).flatMap((cell) => cell.probes);
  const bound = threshold === undefined ? '' : `: --judge-threshold ${threshold} cannot pass on it`;
  for (const judge of judges) {
    const run = result.judges?.find((item) => item.judge === judge);
    if (!run) continue;
    if (run.judged === 0 || run.unparsed / run.judged > MAX_UNPARSED_SHARE) {
      const what =
        run.judged === 0
          ? `${run.label} judged no answer (the run has no ${result.cells.length === 0 ? 'cell' : 'probe'})`
          : `${run.label} could not read ${run.unparsed} of its ${run.judged} replies as yes or no (${Math.round((100 * run.unparsed) / run.judged)} %, more than ${100 * MAX_UNPARSED_SHARE} %): its accuracy is not a measurement; check the judge model and prompts (the raw replies are in results.json)`;
      gate.warnings.push(`warning: ${what}`);
      if (threshold !== undefined) gate.failures.push(`${what}${bound}`);
      continue;
    }
    const accuracy = judgedAccuracy(probes, judge);
    if (threshold !== undefined && accuracy.value !== null && accuracy.value < threshold)
      gate.failures.push(
        `${run.label}: answer accuracy ${accuracy.value.toFixed(2)} (${accuracy.hits}/${accuracy.n}) is below --judge-threshold ${threshold}`,
      );
  }
  return gate;
}
