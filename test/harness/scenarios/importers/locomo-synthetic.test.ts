/** The committed synthetic LoCoMo-format file is what its generator writes, and imports cleanly. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { syntheticLocomo } from '../../../../fixtures/datasets/synthetic/make-locomo.js';
import { importDataset } from '../../../../harness/scenarios/importers/index.js';
import { ROOT } from '../../../cli/helpers.js';

const FILE = path.join(ROOT, 'fixtures/datasets/synthetic/locomo-synthetic.json');

describe('synthetic LoCoMo-format fixture', () => {
  it('equals the generator output and imports without repairs', async () => {
    expect(JSON.parse(readFileSync(FILE, 'utf8'))).toEqual(syntheticLocomo());
    const { scenarios, report } = await importDataset(`locomo:${FILE}`);
    expect(scenarios).toHaveLength(10);
    expect(report.repaired).toEqual([]);
    expect(report.skipped).toEqual([]);
    expect(report.imported).toBe(180);
  });
});
