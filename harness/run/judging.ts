/**
 * Judging a run's answers, as `membench run --judge` and `membench judge` do: the judges' settings
 * checked before any work, then each judge over the results (live ones through the response cache).
 */
import { MembenchError } from '../core/errors.js';
import { isLiveProvider, ResponseCache } from '../models/index.js';
import type { LiveProviderSettings } from '../models/openai.js';
import { loadPrompts } from '../results/judge-prompts.js';
import { createJudge, judgeRun } from '../results/judges.js';
import type { RunResult } from '../results/schema.js';
import { DEFAULT_CACHE_FILE } from './settings.js';

/** What judging needs besides the judges: where live judges connect (flags and env) and the response cache. */
export interface JudgeSettings {
  judges: readonly string[];
  promptsFile?: string | undefined;
  live?: LiveProviderSettings | undefined;
  /** A file, or false for none (default DEFAULT_CACHE_FILE). */
  cache?: string | false | undefined;
}

/**
 * Refuses a live provider (`openai:NAME` as model, embedder or judge) with neither a base URL nor an
 * API key, before any request: the SDK's default endpoint is the public api.openai.com, where the
 * answers (and their gold) would go unasked.
 */
export function checkLiveEndpoint(
  providers: readonly { flag: string; provider: string | undefined }[],
  live: LiveProviderSettings | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
): void {
  const chosen = [live?.baseUrl, env.OPENAI_BASE_URL, live?.apiKey, env.OPENAI_API_KEY].some(
    (value) => value !== undefined && value.trim() !== '',
  );
  if (chosen) return;
  const first = providers.find(({ provider }) => provider !== undefined && isLiveProvider(provider));
  if (!first) return;
  throw new MembenchError(
    'INVALID_ARGUMENT',
    `${first.flag} ${first.provider}: no endpoint is set: with neither a base URL (--base-url, $OPENAI_BASE_URL) nor an API key (--api-key, $OPENAI_API_KEY) the requests would go to the public https://api.openai.com/v1 without a key: give --base-url for a local server (Ollama, vLLM, membench serve), or a key for OpenAI`,
  );
}

/** Refuses an unknown judge or a bad prompts file before any work is done (a run is not replayed to fail at its end). */
export async function checkJudgeSettings(settings: JudgeSettings): Promise<void> {
  if (settings.promptsFile !== undefined && !settings.judges.some(isLiveProvider))
    throw new MembenchError(
      'INVALID_ARGUMENT',
      settings.judges.length === 0
        ? `--judge-prompts ${settings.promptsFile}: name a judge with --judge openai:NAME`
        : `--judge-prompts ${settings.promptsFile}: no LLM judge reads it (the offline judge scores by its rules): name one with --judge openai:NAME, or drop --judge-prompts`,
    );
  const twice = settings.judges.find((judge, index) => settings.judges.indexOf(judge) !== index);
  if (twice !== undefined)
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `--judge ${twice} is given twice: name two different judges for agreement`,
    );
  for (const judge of settings.judges) createJudge(judge, { cache: false, provider: settings.live ?? {} });
  checkLiveEndpoint(
    settings.judges.map((judge) => ({ flag: '--judge', provider: judge })),
    settings.live,
  );
  if (settings.promptsFile !== undefined) await loadPrompts(settings.promptsFile);
}

/** Judges `result` with each judge in turn (live ones through the response cache), returning the judged copy. */
export async function judgeResults(result: RunResult, settings: JudgeSettings): Promise<RunResult> {
  const prompts = settings.promptsFile === undefined ? undefined : await loadPrompts(settings.promptsFile);
  const live = settings.judges.some(isLiveProvider);
  const cache = live && settings.cache !== false ? ResponseCache.open(settings.cache ?? DEFAULT_CACHE_FILE) : undefined;
  try {
    const judges = settings.judges.map((judge) =>
      createJudge(judge, { ...(prompts ? { prompts } : {}), provider: settings.live ?? {}, cache: cache ?? false }),
    );
    return await judgeRun(result, judges);
  } finally {
    cache?.close();
  }
}
