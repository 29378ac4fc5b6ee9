/**
 * A user's strategy that prints with console.log, run by the real CLI: its lines reach membench's
 * stderr, led by where they come from, and membench's stdout carries the tables only, wherever the
 * strategy ran: the membench process (its module loaded to plan the run), a pool worker, agent processes.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { membench } from './helpers.js';
import { writeSmallScenario } from '../helpers/small-scenario.js';
import { tempDir } from '../helpers/temp-dir.js';

const PRINTS = './fixtures/strategies/prints.mjs';

it("sends a strategy's console.log to stderr, led by the cell or module, never into the tables on stdout", async () => {
  const dir = await tempDir('membench-strategy-output-');
  const plain = writeSmallScenario(dir, 'plain');
  // A crash: the cell runs in agent processes, the one killed and the one that recovers.
  const crashing = path.join(dir, 'crashing.yaml');
  writeFileSync(
    crashing,
    [
      'name: crashing',
      'steps:',
      '  - user: The pork belly is in the freezer.',
      '    assistant: Noted.',
      '  - crash: before_model_call',
      '  - user: What should I cook tonight?',
      '  - probe: Where is the pork belly?',
      '    expect: ["freezer"]',
      '',
    ].join('\n'),
  );
  const result = await membench(['run', '-s', PRINTS, '-c', plain, '-c', crashing, '-o', path.join(dir, 'run'), '-q']);
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout).toContain('leaderboard');
  expect(result.stdout).not.toContain('PRINTS-MARKER');
  const lines = result.stderr.split('\n');
  // Planning the run, this process evaluated the module.
  expect(lines).toContain(`[strategy ${PRINTS}] PRINTS-MARKER module evaluated`);
  // The plain cell opened in a pool worker; the crashing one in the agent process before the crash and in the one after.
  expect(lines.filter((line) => line === '[plain/prints] PRINTS-MARKER open')).toHaveLength(1);
  expect(lines.filter((line) => line === '[crashing/prints] PRINTS-MARKER open')).toHaveLength(2);
});
