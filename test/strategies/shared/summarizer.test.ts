import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { OfflineModel } from '../../../harness/models/index.js';
import {
  conversationLines,
  foldSummary,
  SUMMARY_FILE,
  SummaryStore,
  truncateText,
} from '../../../strategies/shared/summarizer.js';
import { TokenCounter } from '../../../harness/core/tokens.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'membench-summarizer-'));
  dirs.push(dir);
  return dir;
}

const tokens = new TokenCounter('gpt-4o');

describe('conversationLines', () => {
  it('writes one line per message, tool calls and results included', () => {
    const messages: BaseMessage[] = [
      new HumanMessage('我想做红烧肉'),
      new AIMessage({
        content: '',
        tool_calls: [{ id: 'c1', name: 'search', args: { q: '红烧肉' }, type: 'tool_call' }],
      }),
      new ToolMessage({ content: '五花肉 500g', tool_call_id: 'c1', name: 'search' }),
      new AIMessage('先焯水。'),
    ];
    expect(conversationLines(messages)).toBe(
      'Human: 我想做红烧肉\nAI: called search {"q":"红烧肉"}\nTool: search returned 五花肉 500g\nAI: 先焯水。',
    );
  });
});

describe('truncateText', () => {
  const text = 'The quick brown fox jumps over the lazy dog. 我对花生过敏，但是喜欢红烧肉。 Lin lives in Hangzhou.';
  it('keeps the start or the end within the budget', () => {
    for (let budget = 1; budget <= 30; budget++) {
      const head = truncateText(text, budget, tokens, 'start');
      const tail = truncateText(text, budget, tokens, 'end');
      expect(tokens.countText(head)).toBeLessThanOrEqual(budget);
      expect(tokens.countText(tail)).toBeLessThanOrEqual(budget);
      expect(text.startsWith(head)).toBe(true);
      expect(text.endsWith(tail)).toBe(true);
    }
    expect(truncateText(text, 1000, tokens, 'end')).toBe(text);
    expect(truncateText(text, 0, tokens, 'end')).toBe('');
  });
});

describe('SummaryStore', () => {
  const model = new OfflineModel();
  const fold = (previous: string, messages: BaseMessage[], stale: boolean) =>
    foldSummary(model, tokens, previous, messages, 200, stale);

  it('folds queued messages, bumps the version and drops them, in one commit', async () => {
    const dir = await tempDir();
    const store = SummaryStore.open(dir, SUMMARY_FILE, 'sync');
    const from = store.append(new HumanMessage('Lin lives in Hangzhou.'));
    const through = store.append(new AIMessage('Got it.'));
    const job = store.enqueueFold(from, through);
    expect(job.baseVersion).toBe(0);
    expect(store.enqueueFold(through + 1, through + 1).baseVersion).toBe(1); // the version it will build on
    await store.runFold(job, fold);
    expect(store.summary).toEqual({ text: 'Lin lives in Hangzhou.', version: 1 });
    expect(store.readMessages()).toEqual([]);
    expect(store.pendingFolds().map((pending) => pending.baseVersion)).toEqual([1]);
    await store.close();
    const reopened = SummaryStore.open(dir, SUMMARY_FILE, 'sync');
    expect(reopened.summary.version).toBe(1);
    await reopened.close();
  });

  it('never overwrites a summary written while its model call ran: it folds again on top', async () => {
    const dir = await tempDir();
    const store = SummaryStore.open(dir, SUMMARY_FILE, 'sync');
    const seq = store.append(new HumanMessage('I like green tea.'));
    const job = store.enqueueFold(seq, seq);
    const seen: { previous: string; stale: boolean }[] = [];
    await store.runFold(job, async (previous, messages, stale) => {
      seen.push({ previous, stale });
      if (seen.length === 1) {
        const other = new Database(path.join(dir, SUMMARY_FILE));
        other.exec("UPDATE summary SET text = 'The user now drinks only coffee.', version = version + 1");
        other.close();
      }
      return fold(previous, messages, stale);
    });
    expect(seen).toEqual([
      { previous: '', stale: false },
      { previous: 'The user now drinks only coffee.', stale: true },
    ]);
    // The correction is kept and stays last (newer facts win), the job's line is folded in before it.
    expect(store.summary.text).toBe('I like green tea. The user now drinks only coffee.');
    expect(store.summary.version).toBe(2);
    await store.close();
  });

  it('treats a job queued before a correction as the older information', async () => {
    const dir = await tempDir();
    const store = SummaryStore.open(dir, SUMMARY_FILE, 'sync');
    const seq = store.append(new HumanMessage('My favourite drink is tea.'));
    const job = store.enqueueFold(seq, seq);
    const other = new Database(path.join(dir, SUMMARY_FILE));
    other.exec("UPDATE summary SET text = 'Correction: my favourite drink is coffee.', version = version + 1");
    other.close();
    await store.runFold(job, fold);
    expect(store.summary.text.endsWith('Correction: my favourite drink is coffee.')).toBe(true);
  });

  it('drops the result of a job another run already completed', async () => {
    const dir = await tempDir();
    const first = SummaryStore.open(dir, SUMMARY_FILE, 'sync');
    const seq = first.append(new HumanMessage('Lin lives in Hangzhou.'));
    const job = first.enqueueFold(seq, seq);
    const second = SummaryStore.open(dir, SUMMARY_FILE, 'sync');
    await second.runFold(second.pendingFolds()[0]!, fold);
    expect(await first.runFold(job, async () => 'a duplicate result')).toBeUndefined();
    expect(second.summary).toEqual({ text: 'Lin lives in Hangzhou.', version: 1 });
    await first.close();
    await second.close();
  });

  it('keeps everything in memory in mode exit until close, and never writes in mode none', async () => {
    const dir = await tempDir();
    const file = path.join(dir, SUMMARY_FILE);
    const exit = SummaryStore.open(dir, SUMMARY_FILE, 'exit');
    const seq = exit.append(new HumanMessage('The locker code is 9931.'));
    exit.enqueueFold(seq, seq);
    expect(existsSync(file)).toBe(false);
    await exit.close();
    const reopened = SummaryStore.open(dir, SUMMARY_FILE, 'exit');
    expect(reopened.readMessages().map((stored) => stored.message.content)).toEqual(['The locker code is 9931.']);
    expect(reopened.pendingFolds()).toHaveLength(1);
    await reopened.close();

    const noneDir = await tempDir();
    const none = SummaryStore.open(noneDir, SUMMARY_FILE, 'none');
    none.append(new HumanMessage('gone'));
    await none.close();
    expect(existsSync(path.join(noneDir, SUMMARY_FILE))).toBe(false);
  });
});
