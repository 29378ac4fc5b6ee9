/**
 * A user's strategy module that breaks the contract (fixtures/strategies/breaks-contract.mjs): its
 * cell fails in words naming the module, the method and what was wrong, in this process and in an
 * agent process (it was a TypeError from inside the harness: `this.memory.load is not a function`).
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBenchmark } from '../../../harness/run/runner.js';
import type { CellResult } from '../../../harness/results/schema.js';
import { writeSmallScenario } from '../../helpers/small-scenario.js';
import { tempDir } from '../../helpers/temp-dir.js';

const FIXTURE = path.resolve('fixtures/strategies/breaks-contract.mjs');
const scenario = writeSmallScenario(await tempDir('membench-contract-'), 'pantry');

/** Each cell's `how` knob with its error. */
const errors = (cells: readonly CellResult[]) =>
  Object.fromEntries(
    cells.map((cell) => [String(cell.options.how), cell.status === 'error' ? cell.error : cell.status]),
  );

/** The words each way of breaking the contract fails its cell with. */
const SAID = {
  'no-load': `strategy ${FIXTURE}: create() returned an object without load() (a strategy needs open, save, load, close: see docs/own-strategy.md)`,
  'text-messages': `strategy ${FIXTURE}: load() returned messages "hello": expected an array of LangChain BaseMessages (HumanMessage, AIMessage, …)`,
  'plain-messages': `strategy ${FIXTURE}: load() returned messages[0] {"role":"user","content":"hi"}: expected a LangChain BaseMessage (HumanMessage, AIMessage, …)`,
  'load-undefined': `strategy ${FIXTURE}: load() returned undefined: expected an object { messages: BaseMessage[], retrieved?: RetrievedItem[] }`,
  'bare-array': `strategy ${FIXTURE}: load() returned an array: expected an object { messages: BaseMessage[], retrieved?: RetrievedItem[] } (the messages go in its \`messages\`)`,
  'text-retrieved': `strategy ${FIXTURE}: load() returned retrieved "x": expected an array of { stepIds, score }, or no \`retrieved\``,
};

describe('a strategy that breaks the contract', () => {
  it('in this process: create() without load() and load() results of the wrong shape are said with the module and the method', async () => {
    const result = await runBenchmark({
      scenarios: [scenario],
      strategies: [FIXTURE],
      params: [`breaks-contract.how=${Object.keys(SAID).join(',')}`],
    });
    expect(errors(result.cells)).toEqual(SAID);
  });

  it('in an agent process: the same words', { timeout: 120_000 }, async () => {
    const result = await runBenchmark({
      scenarios: [scenario],
      strategies: [FIXTURE],
      params: ['breaks-contract.how=plain-messages'],
      agentProcesses: true,
    });
    expect(errors(result.cells)).toEqual({
      'plain-messages': `step 0 failed in the agent process: ${SAID['plain-messages']}`,
    });
  });
});
