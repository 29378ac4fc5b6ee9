/**
 * The prompts membench sends for each model task. Live models read them as instructions; the
 * offline reference model finds its inputs in the same places, so both see exactly the same
 * messages and neither sees gold data.
 */
import { HumanMessage, SystemMessage, type BaseMessage } from '@langchain/core/messages';

export const ANSWER_INSTRUCTION =
  'Answer the last question using only what the conversation so far and your memory say. ' +
  'Be brief. If the answer was never given, say you do not know.';

export const REPLY_INSTRUCTION = 'You are a helpful assistant. Reply briefly to the last message.';

export const SUMMARIZE_INSTRUCTION =
  'Progressively summarize the lines of conversation provided, adding onto the previous summary. ' +
  'Keep names, numbers, preferences and corrections; when a fact is corrected keep only the latest value. ' +
  'Return only the new summary.';

export const SUMMARY_HEADER = 'Current summary:';
export const NEW_LINES_HEADER = 'New lines of conversation:';

/** Messages for answering a probe question from assembled context. */
export function answerPrompt(context: readonly BaseMessage[], question: string): BaseMessage[] {
  return [new SystemMessage(ANSWER_INSTRUCTION), ...context, new HumanMessage(question)];
}

/** Messages for an assistant reply to the current context (its last message is the user's). */
export function replyPrompt(context: readonly BaseMessage[]): BaseMessage[] {
  return [new SystemMessage(REPLY_INSTRUCTION), ...context];
}

/** Messages for folding new conversation lines into a running summary. */
export function summarizePrompt(previousSummary: string, newLines: string): BaseMessage[] {
  return [
    new SystemMessage(SUMMARIZE_INSTRUCTION),
    new HumanMessage(`${SUMMARY_HEADER}\n${previousSummary}\n\n${NEW_LINES_HEADER}\n${newLines}`),
  ];
}

/** Splits a summarize prompt back into its parts (the offline model reads it this way). */
export function parseSummarizePrompt(text: string): { previousSummary: string; newLines: string } {
  const summaryAt = text.indexOf(SUMMARY_HEADER);
  const linesAt = text.indexOf(NEW_LINES_HEADER);
  if (summaryAt < 0 || linesAt < 0) return { previousSummary: '', newLines: text };
  return {
    previousSummary: text.slice(summaryAt + SUMMARY_HEADER.length, linesAt).trim(),
    newLines: text.slice(linesAt + NEW_LINES_HEADER.length).trim(),
  };
}

export const EXTRACT_MEMORIES_INSTRUCTION =
  'Extract durable facts about the user from their message(s) below: preferences, personal facts, constraints, ' +
  'corrections; not small talk, questions or requests. To update a memory, reuse its name and give its full new content. ' +
  'Return only JSON: [{"name","description" (max 150 chars),"content","type": "user|feedback|project|reference"}] or [].';

export const MEMORY_INDEX_HEADER = 'MEMORY.md:';
export const RELATED_MEMORIES_HEADER = 'Related memories:';
export const USER_MESSAGES_HEADER = 'User:';
export const ASSISTANT_REPLY_HEADER = 'Assistant (context only):';

/** What the `extract-memories` prompt shows: the index, a few related bodies, the exchange. */
export interface ExtractMemoriesInput {
  indexLines: readonly string[];
  related: readonly { name: string; body: string }[];
  userMessages: readonly string[];
  reply: string;
}

// One shared object, so the token counter's per-message cache encodes the instruction once.
const extractMemoriesSystem = new SystemMessage(EXTRACT_MEMORIES_INSTRUCTION);

/** Messages asking for the durable facts of one exchange (file-index automatic memory). */
export function extractMemoriesPrompt(input: ExtractMemoriesInput): BaseMessage[] {
  const related = input.related.map((memory) => `### ${memory.name}\n${memory.body}`).join('\n\n');
  const text = [
    `${MEMORY_INDEX_HEADER}\n${input.indexLines.join('\n') || '(none)'}`,
    `${RELATED_MEMORIES_HEADER}\n${related || '(none)'}`,
    `${USER_MESSAGES_HEADER}\n${input.userMessages.join('\n')}`,
    `${ASSISTANT_REPLY_HEADER}\n${input.reply}`,
  ].join('\n\n');
  return [extractMemoriesSystem, new HumanMessage(text)];
}

/** Splits an extract-memories prompt back into its parts (the offline model reads it this way). */
export function parseExtractMemoriesPrompt(text: string): ExtractMemoriesInput {
  // Index lines are single lines and the reply one sentence, so the section breaks are unambiguous
  // when found from the outside in; bodies and user text sit between them.
  const mark = (header: string): string => `\n\n${header}\n`;
  const replyAt = text.lastIndexOf(mark(ASSISTANT_REPLY_HEADER));
  const end = replyAt < 0 ? text.length : replyAt;
  const userAt = text.lastIndexOf(mark(USER_MESSAGES_HEADER), end);
  const relatedAt = text.indexOf(mark(RELATED_MEMORIES_HEADER));
  const between = (from: number, header: string, to: number): string => {
    if (from < 0) return '';
    const part = text.slice(from + mark(header).length, Math.max(to, from + mark(header).length)).trim();
    return part === '(none)' ? '' : part;
  };
  const indexText = text.startsWith(`${MEMORY_INDEX_HEADER}\n`)
    ? text.slice(MEMORY_INDEX_HEADER.length, relatedAt < 0 ? end : relatedAt)
    : '';
  const related = between(relatedAt, RELATED_MEMORIES_HEADER, userAt < 0 ? end : userAt);
  const user = between(userAt, USER_MESSAGES_HEADER, end);
  return {
    indexLines: indexText.split('\n').filter((line) => line.startsWith('- [')),
    related: [...related.matchAll(/^### (.+)\n([\s\S]*?)(?=\n\n### |$(?![\s\S]))/gmu)].map((match) => ({
      name: match[1]!.trim(),
      body: match[2]!.trim(),
    })),
    userMessages: user ? user.split('\n') : [],
    reply: between(replyAt, ASSISTANT_REPLY_HEADER, text.length),
  };
}
