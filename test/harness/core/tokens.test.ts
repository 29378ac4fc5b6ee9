import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import {
  encodingForModel,
  RECENT_TEXTS,
  TokenCounter,
  TOKENS_PER_MESSAGE,
  TOKENS_PER_REPLY,
} from '../../../harness/core/tokens.js';

describe('encodingForModel', () => {
  it.each([
    ['gpt-4o', 'o200k_base'],
    ['gpt-4o-mini', 'o200k_base'],
    ['openai:gpt-4.1-nano', 'o200k_base'],
    ['o1-mini', 'o200k_base'],
    ['o3', 'o200k_base'],
    ['gpt-4', 'cl100k_base'],
    ['gpt-3.5-turbo', 'cl100k_base'],
    ['offline', 'cl100k_base'],
    ['llama3', 'cl100k_base'],
  ])('%s uses %s', (model, encoding) => {
    expect(encodingForModel(model)).toBe(encoding);
  });
});

describe('TokenCounter', () => {
  it('pins English and Chinese counts in both encodings', () => {
    const o200k = new TokenCounter('gpt-4o');
    const cl100k = new TokenCounter('gpt-3.5-turbo');
    expect(o200k.countText('The quick brown fox jumps over the lazy dog.')).toBe(10);
    expect(cl100k.countText('The quick brown fox jumps over the lazy dog.')).toBe(10);
    expect(o200k.countText('我想做红烧肉，有素食版本吗？')).toBe(12);
    expect(cl100k.countText('我想做红烧肉，有素食版本吗？')).toBe(21);
  });

  it('adds the per-message overhead and the reply priming', () => {
    const counter = new TokenCounter('gpt-4o');
    const message = new HumanMessage('教我做');
    expect(counter.countMessage(message)).toBe(
      TOKENS_PER_MESSAGE + counter.countText('user') + counter.countText('教我做'),
    );
    expect(counter.countMessages([new HumanMessage('Hello!'), new AIMessage('Hi there, how can I help?')])).toBe(21);
    expect(counter.countMessages([])).toBe(0);
    expect(counter.countMessages([message])).toBe(counter.countMessage(message) + TOKENS_PER_REPLY);
  });

  it('counts tool calls and tool results', () => {
    const counter = new TokenCounter('gpt-4o');
    const call = new AIMessage({
      content: '',
      tool_calls: [{ id: 'c1', name: 'place_order', args: { item: '红烧肉' }, type: 'tool_call' }],
    });
    const bare = new AIMessage('');
    expect(counter.countMessage(call)).toBeGreaterThan(counter.countMessage(bare) + counter.countText('place_order'));
    expect(counter.countMessage(new ToolMessage({ content: 'ok', tool_call_id: 'c1' }))).toBeGreaterThan(
      TOKENS_PER_MESSAGE,
    );
  });

  it('tokenises each message once, however often the history is counted', () => {
    const counter = new TokenCounter('gpt-4o');
    const history = Array.from({ length: 100 }, (_, index) => new HumanMessage(`message ${index} 第${index}条`));
    counter.countMessages(history);
    const afterFirst = counter.encodeCalls;
    for (let i = 0; i < 10; i++) counter.countMessages(history);
    expect(counter.encodeCalls).toBe(afterFirst);
  });

  it('tokenises a text counted again soon after once (a reply metered, then checked), with the same count', () => {
    const counter = new TokenCounter('gpt-4o');
    const reply = `The summary so far: ${'红烧肉 and braised pork. '.repeat(40)}`;
    const first = counter.countText(reply);
    const calls = counter.encodeCalls;
    expect(counter.countText(`${reply}`.slice(0))).toBe(first);
    expect(counter.encodeCalls).toBe(calls);
    // A bounded memory: after more other texts than it keeps, it is tokenised again, to the same count.
    for (let i = 0; i < RECENT_TEXTS + 88; i++) counter.countText(`filler ${i}`);
    expect(counter.countText(reply)).toBe(first);
    expect(counter.encodeCalls).toBe(calls + RECENT_TEXTS + 89);
  });

  it('tokenises a long context once even when a store rebuilds its messages every turn', () => {
    const counter = new TokenCounter('offline');
    const texts = Array.from({ length: 1_500 }, (_, index) => `exchange ${index}: the shed key is under pot ${index}`);
    counter.countMessages(texts.map((text) => new HumanMessage(text)));
    const afterFirst = counter.encodeCalls;
    for (let turn = 0; turn < 3; turn++) counter.countMessages(texts.map((text) => new HumanMessage(text)));
    expect(counter.encodeCalls).toBe(afterFirst);
  });
});
