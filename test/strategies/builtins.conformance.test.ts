/** Runs the shared conformance suite once per registered built-in strategy. */
import { rm } from 'node:fs/promises';
import { expect, it } from 'vitest';
import { builtinStrategies } from '../../strategies/index.js';
import { expectTempDirsRemoved } from '../helpers/temp-dirs.js';
import { describeConformance, makeHarness } from './conformance.js';

// A conformance run leaves no temp dir behind: each check removes the dir it opened its strategy on.
expectTempDirsRemoved();

for (const definition of builtinStrategies) describeConformance(definition);

it.for(builtinStrategies.map((definition) => [definition.name, definition] as const))(
  '%s keeps its stores open at a session boundary in mode sync (a replayed dataset reopens nothing)',
  async ([, definition]) => {
    const harness = await makeHarness(definition);
    const strategy = harness.create('sync');
    try {
      await strategy.open();
      expect(await strategy.newSession?.()).toBe(true);
    } finally {
      await strategy.close();
      await rm(harness.dir, { recursive: true, force: true });
    }
  },
);
