/** What kind of memory each strategy is travels from its definition into results.json, so the bench and reports list no strategy names. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runBenchmark } from '../../harness/run/runner.js';
import { builtinStrategies } from '../../strategies/index.js';
import { defineStrategy, strategyKnobs, traitsOf } from '../../strategies/types.js';
import { fileIndex } from '../../strategies/file-index.js';
import { summary } from '../../strategies/summary.js';
import { flatExempt, heldNearFloor } from '../../harness/bench/targets.js';

describe('strategy traits', () => {
  it('every built-in declares its kind and whether it keeps messages verbatim', () => {
    for (const definition of builtinStrategies) {
      expect(definition.kind, definition.name).toBeDefined();
      expect(typeof definition.keepsVerbatim, definition.name).toBe('boolean');
      if (definition.kind === 'retrieval') expect(definition.ranks, definition.name).toBeDefined();
    }
  });

  it('records the declared traits, defaults filled in, and none for a strategy that declares no kind', () => {
    expect(traitsOf(fileIndex)).toEqual({
      kind: 'extraction',
      keepsVerbatim: false,
      storage: 'files',
      callsModelEveryTurn: false,
    });
    expect(traitsOf(summary)).toMatchObject({ kind: 'summary', storage: 'sqlite', callsModelEveryTurn: true });
    const plain = defineStrategy({
      name: 'plain',
      description: 'no traits',
      options: z.object({}),
      defaultDurability: 'sync',
      create: () => ({}) as never,
    });
    expect(traitsOf(plain)).toBeUndefined();
  });

  it("writes each setting's traits into the run header", async () => {
    const result = await runBenchmark({ scenarios: ['recipes-en'], strategies: ['buffer', 'bm25'] });
    expect(result.header.strategies.map((spec) => [spec.name, spec.traits?.kind, spec.traits?.ranks])).toEqual([
      ['buffer', 'full-history', undefined],
      ['bm25', 'retrieval', 'terms'],
    ]);
  });

  it('the bench derives its targets from the traits: summary is reported only, buffer is exempt from the flat target', () => {
    expect(
      builtinStrategies.filter((definition) => !heldNearFloor(definition.name)).map((definition) => definition.name),
    ).toEqual(['summary']);
    expect(
      builtinStrategies.filter((definition) => flatExempt(definition.name)).map((definition) => definition.name),
    ).toEqual(['buffer']);
  });

  it('lists a definition its knobs with the defaults its schema gives, and none for a schema that is not an object', () => {
    const knobbed = defineStrategy({
      name: 'knobbed',
      description: 'two knobs',
      options: z.object({
        k: z.number().int().default(2),
        cap: z.number().optional(),
        tags: z.array(z.string()).default([]),
      }),
      defaultDurability: 'sync',
      create: () => {
        throw new Error('not created');
      },
    });
    expect(strategyKnobs(knobbed)).toEqual([{ name: 'k', default: 2 }, { name: 'cap' }, { name: 'tags', default: [] }]);
    const opaque = defineStrategy({
      name: 'opaque',
      description: 'no object schema',
      options: z.unknown(),
      defaultDurability: 'sync',
      create: () => {
        throw new Error('not created');
      },
    });
    expect(strategyKnobs(opaque)).toEqual([]);
  });
});
