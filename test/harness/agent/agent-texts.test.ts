/**
 * The texts an agent is given in a scenario (harness/agent/agent-texts.ts), what a strategy's
 * `preloadShared` prepares ahead of a cell: every message, memory (with the exchange the loop wraps
 * it in), tool call, question and choice, concurrent sessions included, and never what a probe
 * expects or cites.
 */
import { describe, expect, it } from 'vitest';
import { agentTexts, forgetExchange, rememberExchange } from '../../../harness/agent/agent-texts.js';
import { checkScenarioText } from '../../../harness/scenarios/load.js';

const SCENARIO = `
name: texts
steps:
  - id: u1
    user: 我们下周去杭州。
    assistant: 好的，我记下了行程。
  - id: r1
    remember: 奶奶住在杭州。
  - remember: Dinner is at 7 pm.
  - forget: 旧的地址
  - tool: calendar.add
    args: { title: 西湖散步 }
    result: 已添加
  - concurrent:
      - - remember: 本的生日是五月三日。
      - - user: Ben plays football.
  - probe: 奶奶住在哪里？
    expect: [金色的秘密答案]
    evidence: [r1]
  - probe: Which city?
    ask: "Which city: {{a}} or {{b}}?"
    choices: [杭州, 苏州]
    expect: [杭州]
`;

describe('agentTexts', () => {
  const check = checkScenarioText(SCENARIO, 'texts.yaml');
  if (!('scenario' in check) || !check.scenario) throw new Error(JSON.stringify(check));
  const texts = agentTexts(check.scenario.steps);

  it('holds every message, memory, tool call and question, and the exchanges the loop wraps memories in', () => {
    for (const text of [
      '我们下周去杭州。',
      '好的，我记下了行程。',
      '奶奶住在杭州。',
      rememberExchange('奶奶住在杭州。').user,
      rememberExchange('奶奶住在杭州。').ack,
      rememberExchange('Dinner is at 7 pm.').user,
      forgetExchange('旧的地址').user,
      forgetExchange('旧的地址').ack,
      'calendar.add\n{"title":"西湖散步"}', // the tool call as stepMessages puts it into the conversation
      '已添加',
      '本的生日是五月三日。',
      'Ben plays football.',
      '奶奶住在哪里？',
      'Which city: {{a}} or {{b}}?',
      '苏州',
    ])
      expect(texts).toContain(text);
    expect(texts.some((text) => text.includes('西湖散步'))).toBe(true);
    expect(rememberExchange('奶奶住在杭州。').ack).toBe('好的，我记住了。');
  });

  it('never holds what a probe expects or cites', () => {
    expect(texts.some((text) => text.includes('金色的秘密答案'))).toBe(false);
    expect(texts).not.toContain('r1');
  });
});
