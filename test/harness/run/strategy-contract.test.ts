/**
 * A user's strategy module that breaks the contract (fixtures/strategies/breaks-contract.mjs): its
 * cell fails in words naming the module, the method and what was wrong, wherever the cell runs (in
 * this process, in agent processes, in a pool worker), and the other cells run on.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBenchmark } from '../../../harness/run/runner.js';
import type { CellResult } from '../../../harness/results/schema.js';
import { writeSmallScenario } from '../../helpers/small-scenario.js';
import { tempDir } from '../../helpers/temp-dir.js';

const FIXTURE = path.resolve('fixtures/strategies/breaks-contract.mjs');
const scenario = writeSmallScenario(await tempDir('membench-contract-'), 'pantry');

/** Each cell's `how` knob with its status, error and phase. */
const outcomes = (cells: readonly CellResult[]) =>
  Object.fromEntries(
    cells.map((cell) => [
      String(cell.options.how ?? cell.strategy),
      cell.status === 'error' ? { error: cell.error, phase: cell.phase } : { status: cell.status },
    ]),
  );

/** The words each way of breaking the contract fails its cell with (after the agent process's own prefix, if any). */
const SAID = {
  'no-load': `strategy ${FIXTURE}: create() returned an object without load() (a strategy needs open, save, load, close: see docs/own-strategy.md)`,
  'text-messages': `strategy ${FIXTURE}: load() returned messages "hello": expected an array of LangChain BaseMessages (HumanMessage, AIMessage, …)`,
  'plain-messages': `strategy ${FIXTURE}: load() returned messages[0] {"role":"user","content":"hi"}: expected a LangChain BaseMessage (HumanMessage, AIMessage, …)`,
  'load-undefined': `strategy ${FIXTURE}: load() returned undefined: expected an object { messages: BaseMessage[], retrieved?: RetrievedItem[] }`,
  'bare-array': `strategy ${FIXTURE}: load() returned an array: expected an object { messages: BaseMessage[], retrieved?: RetrievedItem[] } (the messages go in its \`messages\`)`,
  'text-retrieved': `strategy ${FIXTURE}: load() returned retrieved "x": expected an array of { stepIds, score }, or no \`retrieved\``,
  'save-throws': `strategy ${FIXTURE}: save() threw Error: save broke`,
  'close-throws': `strategy ${FIXTURE}: close() threw Error: close broke`,
};

describe('a strategy that breaks the contract', () => {
  it('in this process: create() without load(), load() results of the wrong shape and a throwing method are said with the module and the method', async () => {
    const result = await runBenchmark({
      scenarios: [scenario],
      strategies: [FIXTURE],
      params: [`breaks-contract.how=${Object.keys(SAID).join(',')}`],
    });
    expect(outcomes(result.cells)).toEqual(
      Object.fromEntries(Object.entries(SAID).map(([how, error]) => [how, { error, phase: undefined }])),
    );
  });

  it('in agent processes: the same words, a close() that throws fails the cell (it hung), an exception nothing awaited fails it too', {
    timeout: 120_000,
  }, async () => {
    const result = await runBenchmark({
      scenarios: [scenario],
      strategies: [FIXTURE],
      params: ['breaks-contract.how=plain-messages,close-throws,timer-throws'],
      agentProcesses: true,
      cellTimeoutMs: 60_000,
    });
    expect(outcomes(result.cells)).toEqual({
      'plain-messages': { error: `step 0 failed in the agent process: ${SAID['plain-messages']}` },
      'close-throws': { error: `closing the cell failed in the agent process: ${SAID['close-throws']}` },
      'timer-throws': {
        error: expect.stringMatching(
          /^step \d failed in the agent process: uncaught exception in strategy .*breaks-contract\.mjs: Error: timer throw$/u,
        ),
      },
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
