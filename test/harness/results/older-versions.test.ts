/** Results written by earlier schema versions read back under today's names, and the commands that read results take them. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { asWrittenInItsVersion, parseResults } from '../../../harness/results/read.js';
import { RESULTS_SCHEMA_VERSION } from '../../../harness/results/schema.js';
import { membench, ROOT } from '../../cli/helpers.js';
import { ok } from '../../helpers/cells.js';
import { tempDir } from '../../helpers/temp-dir.js';

const V3 = path.join(ROOT, 'fixtures/results/v3.json');

describe('a version 3 results file', () => {
  it('reads with its settings, durability outcomes and ledger counts under the version 4 names', () => {
    const text = readFileSync(V3, 'utf8');
    expect(text).toContain('"faults"');
    const result = parseResults(text, V3);
    expect(RESULTS_SCHEMA_VERSION).toBe(7);
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

  it('reads as version 6 too (same shape, every probe with its context figures)', () => {
    const v6 = parseResults(readFileSync(V3, 'utf8'), V3);
    v6.header.schemaVersion = 6;
    const result = parseResults(JSON.stringify(v6), 'v6.json');
    expect(result.header.schemaVersion).toBe(6);
    expect(result.cells).toEqual(v6.cells);
  });

  it('is taken by report, explain and compare', async () => {
    const out = path.join(await tempDir('membench-v3-'), 'rendered');
    const report = await membench(['report', V3, '--out', out]);
    expect(report.stderr).toBe('');
    expect(report.code).toBe(0);
    expect(readFileSync(path.join(out, 'report.md'), 'utf8')).toContain('window(k=2)');
    expect((await membench(['explain', V3])).code).toBe(0);
    expect((await membench(['compare', V3, V3])).code).toBe(0);
  });
});

describe('a version 5 file with an error cell', () => {
  /** The v3 fixture as version 5 wrote it, with one cell errored the way versions 2 to 5 wrote errors: zeroed figures beside `status: 'error'`. */
  function version5(error: string | undefined): { text: string; id: string } {
    const read = parseResults(readFileSync(V3, 'utf8'), V3);
    const plain = JSON.parse(JSON.stringify(read));
    plain.header.schemaVersion = 5;
    const victim = plain.cells.find((cell: { id: string }) => cell.id === 'recipes-en/window(k=2)');
    victim.status = 'error';
    if (error !== undefined) victim.error = error;
    else delete victim.error;
    return { text: JSON.stringify(plain), id: victim.id };
  }

  it('reads it as an error cell: its message and no figure, so no average takes its zeros', () => {
    const { text, id } = version5('the strategy threw');
    const result = parseResults(text, 'v5.json');
    const cell = result.cells.find((item) => item.id === id)!;
    expect(cell).toMatchObject({ status: 'error', error: 'the strategy threw' });
    for (const figure of ['recall', 'tokens', 'latency', 'probes', 'turns'])
      expect(Object.keys(cell)).not.toContain(figure);
    // The other cells keep every figure.
    expect(result.cells.filter((item) => item.status === 'ok').every((item) => 'recall' in item)).toBe(true);
  });

  it('gives an error cell without a message one, and writes it back zeroed for a version 5 reader', () => {
    const { text, id } = version5(undefined);
    const result = parseResults(text, 'v5.json');
    const cell = result.cells.find((item) => item.id === id)!;
    expect(cell.status).toBe('error');
    expect(cell.status === 'error' && cell.error.length).toBeGreaterThan(0);
    const before = structuredClone(result);
    const back = asWrittenInItsVersion(result) as unknown as { cells: Record<string, unknown>[] };
    const written = back.cells.find((item) => item.id === id)!;
    expect(written).toMatchObject({ status: 'error', probes: [], turns: [], peakRssMb: 0 });
    expect(written.recall).toBeDefined();
    // A copy: the results read are left as read (report renders them again after results.json).
    expect(result).toEqual(before);
  });

  it('writes a version 3 file back under its names in a copy, the results read left under the version 4 names', () => {
    const result = parseResults(readFileSync(V3, 'utf8'), V3);
    const before = structuredClone(result);
    expect(JSON.stringify(asWrittenInItsVersion(result))).toContain('"faults"');
    expect(result).toEqual(before);
    // From version 6 on, nothing to rewrite: the results themselves.
    const current = { ...result, header: { ...result.header, schemaVersion: 7 } };
    expect(asWrittenInItsVersion(current)).toBe(current);
  });
});
