/**
 * What the local endpoint (`server.ts`) makes of a chat request from a peer library: the
 * membench task it is, and, for the offline model, the same information under membench's own
 * prompt headers (which the offline model parses), plus the answer put back into the JSON shape
 * the library parses. Requests are recognised by their structure (the sections mem0 writes), never
 * by anything a scenario's gold data holds: the endpoint only sees what the library sends.
 */
import { HumanMessage, type BaseMessage } from '@langchain/core/messages';
import { extractMemoriesPrompt } from '../core/prompts.js';
import { messageText, roleOf } from '../core/tokens.js';
import type { ModelTask } from './types.js';

/** mem0's extraction prompt (mem0ai 3.x, `generateAdditiveExtractionPrompt`): sections under these headers, in this order. */
const MEM0_NEW_MESSAGES = '## New Messages\n';
const MEM0_EXISTING_MEMORIES = '## Existing Memories\n';
const MEM0_OBSERVATION_DATE = '\n\n## Observation Date';

/** A request in the form the harness's model takes, and how to put the answer back. */
export interface PeerRequest {
  task: ModelTask;
  messages: BaseMessage[];
  /** The answer as the library expects it (mem0: `{"memory":[…]}`); identity for a plain chat. */
  adaptAnswer(text: string): string;
  /** Which library's request it was, for the endpoint's counts (`mem0-extract`, `chat`). */
  kind: string;
}

const lastUserText = (messages: readonly BaseMessage[]): string => {
  const user = messages.findLast((message) => roleOf(message) === 'user');
  return user ? messageText(user) : '';
};

/** The "## New Messages" lines of a mem0 extraction prompt, as `role: text` messages (a line with no role continues the one before). */
function mem0NewMessages(prompt: string): { role: string; text: string }[] {
  const start = prompt.indexOf(MEM0_NEW_MESSAGES);
  const end = prompt.indexOf(MEM0_OBSERVATION_DATE, start);
  const section = prompt.slice(start + MEM0_NEW_MESSAGES.length, end < 0 ? undefined : end);
  const out: { role: string; text: string }[] = [];
  for (const line of section.split('\n')) {
    const speaker = /^(user|assistant|system|tool): ?(.*)$/u.exec(line);
    if (speaker) out.push({ role: speaker[1]!, text: speaker[2]! });
    else if (out.length > 0) out.at(-1)!.text += `\n${line}`;
  }
  return out;
}

/** True when the messages are mem0's fact extraction: its sections in the user message, JSON asked for. */
export function isMem0Extraction(messages: readonly BaseMessage[], jsonRequested: boolean): boolean {
  const prompt = lastUserText(messages);
  return (
    jsonRequested &&
    prompt.includes(MEM0_EXISTING_MEMORIES) &&
    prompt.includes(MEM0_NEW_MESSAGES) &&
    prompt.trimEnd().endsWith('# Output:')
  );
}

/**
 * Classifies one chat request. mem0's extraction is an `extract-facts` task: a live model gets
 * mem0's own messages unchanged; the offline model gets mem0's system prompt (so the meter counts
 * what mem0 really sends) and, in place of mem0's user message, the new messages under membench's
 * extract-memories headers (mem0 3.x only adds memories, and drops repeats by hash itself, so the
 * stand-in is shown no existing memory); its facts go back as mem0's `{"memory":[{id, text,
 * attributed_to}]}`. Anything else is a `reply` to its last message.
 */
export function classifyPeerRequest(
  messages: BaseMessage[],
  options: { jsonRequested: boolean; offline: boolean },
): PeerRequest {
  if (isMem0Extraction(messages, options.jsonRequested)) {
    if (!options.offline) return { task: 'extract-facts', messages, adaptAnswer: (text) => text, kind: 'mem0-extract' };
    const lines = mem0NewMessages(lastUserText(messages));
    const [, rendered] = extractMemoriesPrompt({
      indexLines: [],
      related: [],
      userMessages: lines.filter((line) => line.role === 'user').map((line) => line.text.replace(/\n/gu, ' ')),
      reply: lines
        .filter((line) => line.role === 'assistant')
        .map((line) => line.text.replace(/\n/gu, ' '))
        .join(' '),
    });
    const instructions = messages.filter((message) => roleOf(message) === 'system');
    return {
      task: 'extract-facts',
      messages: [...instructions, rendered!],
      adaptAnswer: mem0Memories,
      kind: 'mem0-extract',
    };
  }
  return {
    task: 'reply',
    messages: messages.length > 0 ? messages : [new HumanMessage('')],
    adaptAnswer: (text) => text,
    kind: 'chat',
  };
}

/** The offline model's facts (a JSON list of sentences) as mem0's extraction answer. */
function mem0Memories(text: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return JSON.stringify({ memory: [] });
  }
  const facts = Array.isArray(parsed)
    ? parsed.filter((fact): fact is string => typeof fact === 'string' && fact.trim().length > 0)
    : [];
  return JSON.stringify({
    memory: facts.map((fact, index) => ({ id: String(index), text: fact.trim(), attributed_to: 'user' })),
  });
}
