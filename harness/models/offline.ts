/**
 * The offline reference model (docs/design.md §4): deterministic, no network, and blind to gold
 * data by construction: it only ever receives the messages of a request. Each task has its module:
 * the answerer (`offline-answer.ts`), the summariser (`offline-summary.ts`), entity extraction
 * (`offline-entities.ts`), memory and fact extraction (`offline-memories.ts`), over how they read
 * statements (`offline-statements.ts`); the hashed embedder is `hashed-embedder.ts`.
 */
import type { BaseMessage } from '@langchain/core/messages';
import { MembenchError } from '../core/errors.js';
import { hasCjk } from '../core/text.js';
import { messageText, roleOf, TokenCounter } from '../core/tokens.js';
import { answerQuestion } from './offline-answer.js';
import { extractEntities } from './offline-entities.js';
import { extractFacts, extractMemories } from './offline-memories.js';
import { speakerLines } from './offline-statements.js';
import { summarizeMessages } from './offline-summary.js';
import type { ChatModel, ChatRequest, ChatResponse } from './types.js';

const DEFAULT_SUMMARY_TOKENS = 256;

/** Deterministic stand-in for a chat model: extractive summaries, pattern entities, quoting answers. */
export class OfflineModel implements ChatModel {
  readonly id = 'offline';
  readonly offline = true;
  private readonly counter = new TokenCounter('offline');

  async chat(request: ChatRequest): Promise<ChatResponse> {
    return { text: this.respond(request), cached: false };
  }

  /** The synchronous core, exposed for tests. */
  respond(request: ChatRequest): string {
    const { messages } = request;
    switch (request.task) {
      case 'answer':
        return answerQuestion(messages);
      case 'reply':
        return this.reply(messages);
      case 'summarize':
      case 'summarize-entity':
        return summarizeMessages(messages, request.maxOutputTokens ?? DEFAULT_SUMMARY_TOKENS, this.counter);
      case 'extract-entities':
        return JSON.stringify(extractEntities(speakerLines(messages.filter((m) => roleOf(m) !== 'system')).join('\n')));
      case 'extract-memories':
        return JSON.stringify(
          extractMemories(
            messages
              .filter((m) => roleOf(m) !== 'system')
              .map(messageText)
              .join('\n'),
          ),
        );
      case 'extract-facts':
        return JSON.stringify(
          extractFacts(
            messages
              .filter((m) => roleOf(m) !== 'system')
              .map(messageText)
              .join('\n'),
          ),
        );
      case 'judge':
        // Judging reads gold answers, which the reference model must never see: the offline judge is rules (harness/results/judge-rules.ts).
        throw new MembenchError('NOT_SUPPORTED', 'the offline model does not judge answers: use --judge offline');
    }
  }

  private reply(messages: readonly BaseMessage[]): string {
    const last = messages.at(-1);
    const text = last ? messageText(last) : '';
    return hasCjk(text) ? '好的。' : 'OK.';
  }
}
