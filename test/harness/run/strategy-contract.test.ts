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

  it('in agent processes: the same words; a close() that throws fails the cell (it hung), an exception nothing awaited fails it too (it passed)', {
    timeout: 120_000,
  }, async () => {
    const result = await runBenchmark({
      scenarios: [scenario],
      strategies: [FIXTURE],
      params: ['breaks-contract.how=plain-messages,close-throws,timer-throws'],
      agentProcesses: true,
      cellTimeoutMs: 60_000,
    });
    expect(errors(result.cells)).toEqual({
      'plain-messages': `step 0 failed in the agent process: ${SAID['plain-messages']}`,
      'close-throws': 'closing the cell failed in the agent process: close broke',
      'timer-throws': expect.stringMatching(
        /^step \d failed in the agent process: uncaught exception in strategy .*breaks-contract\.mjs: Error: timer throw$/u,
      ),
    });
  });

  it('in a pool worker: a timer that throws and a rejection nobody handles fail the cell with their error; the worker is replaced, the other cells run', {
    timeout: 120_000,
  }, async () => {
    const result = await runBenchmark({
      scenarios: [scenario, 'recipes-en'],
      strategies: [FIXTURE, 'buffer'],
      params: ['breaks-contract.how=timer-throws,unhandled-rejection'],
      workers: 2,
    });
    const [timer, rejection, buffer, ...rest] = result.cells;
    expect([timer, rejection].map((cell) => cell?.status === 'error' && [cell.error, typeof cell.phase])).toEqual([
      [`uncaught exception in strategy ${FIXTURE}: Error: timer throw`, 'string'],
      [`unhandled promise rejection in strategy ${FIXTURE}: Error: rejected later`, 'string'],
    ]);
    expect([buffer, ...rest].map((cell) => [cell!.id, cell!.status])).toEqual([
      ['pantry/buffer', 'ok'],
      [expect.stringMatching(/^recipes-en\/breaks-contract/u), 'error'],
      [expect.stringMatching(/^recipes-en\/breaks-contract/u), 'error'],
      ['recipes-en/buffer', 'ok'],
    ]);
  });
});
