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
