/** Results written by earlier schema versions read back under today's names, and the commands that read results take them. */
import { readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseResults } from '../../../harness/results/read.js';
import { RESULTS_SCHEMA_VERSION } from '../../../harness/results/schema.js';
import { membench, ROOT } from '../../cli/helpers.js';
import { ok } from '../../helpers/cells.js';

const V3 = path.join(ROOT, 'fixtures/results/v3.json');

describe('a version 3 results file', () => {
  it('reads with its settings, durability outcomes and ledger counts under the version 4 names', () => {
    const text = readFileSync(V3, 'utf8');
    expect(text).toContain('"faults"');
    const result = parseResults(text, V3);
    expect(RESULTS_SCHEMA_VERSION).toBe(6);
    expect(result.header.schemaVersion).toBe(3);
    expect(result.header.strategies.map((strategy) => strategy.setting)).toEqual(['buffer', 'window(k=2)']);
    const crashed = ok(result.cells.find((cell) => cell.id === 'crash-mid-tool-call/buffer'));
    expect(crashed.setting).toBe('buffer');
    expect(crashed.durabilityOutcome?.crashes.length).toBeGreaterThan(0);
    expect(crashed.effects).toEqual({ effects: 3, effectsDuplicated: 0, effectsRefused: 0 });
    expect(Object.keys(crashed)).not.toContain('faults');
    const plain = result.cells.find((cell) => cell.id === 'recipes-en/window(k=2)')!;
    expect(plain.setting).toBe('window(k=2)');
    expect(plain.durabilityOutcome).toBeUndefined();
  });

  it('reads as version 4 too (same shape; a protocol cell of version 4 always has its summary)', () => {
    const v4 = parseResults(readFileSync(V3, 'utf8'), V3);
    v4.header.schemaVersion = 4;
    const result = parseResults(JSON.stringify(v4), 'v4.json');
    expect(result.header.schemaVersion).toBe(4);
    expect(result.cells.length).toBe(v4.cells.length);
  });

  it('is taken by report, explain and compare', async () => {
    const out = path.join(await mkdtemp(path.join(os.tmpdir(), 'membench-v3-')), 'rendered');
    const report = await membench(['report', V3, '--out', out]);
    expect(report.stderr).toBe('');
    expect(report.code).toBe(0);
    expect(readFileSync(path.join(out, 'report.md'), 'utf8')).toContain('window(k=2)');
    expect((await membench(['explain', V3])).code).toBe(0);
    expect((await membench(['compare', V3, V3])).code).toBe(0);
  });
});
