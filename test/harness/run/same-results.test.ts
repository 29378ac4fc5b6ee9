/** scripts/same-results.mjs: two runs' results are the same apart from timings; a cell of concurrent sessions by its outcome only. */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const SCRIPT = path.resolve(import.meta.dirname, '../../../scripts/same-results.mjs');

const cell = (id: string, more: Record<string, unknown> = {}): Record<string, unknown> => ({
  id,
  status: 'ok',
  tokens: { contextMeanPerTurn: 10, contextTotal: 100 },
  recall: { contextRecall: 1 },
  durationMs: 5,
  ...more,
});

describe('same-results.mjs', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'membench-same-results-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const compare = async (before: unknown[], after: unknown[]): Promise<{ status: number | null; stdout: string }> => {
    const [oldFile, newFile] = [path.join(dir, 'old.json'), path.join(dir, 'new.json')];
    await writeFile(oldFile, JSON.stringify({ cells: before, durabilityMatrix: {} }));
    await writeFile(newFile, JSON.stringify({ cells: after, durabilityMatrix: {} }));
    const run = spawnSync(process.execPath, [SCRIPT, oldFile, newFile], { encoding: 'utf8' });
    return { status: run.status, stdout: run.stdout };
  };

  const base = [cell('plain/buffer'), cell('concurrent-edits/buffer', { interleaved: true })];

  it('sets timings aside, and compares a cell of concurrent sessions on its status and error only', async () => {
    const after = [
      cell('plain/buffer', { durationMs: 9 }),
      cell('concurrent-edits/buffer', { interleaved: true, recall: { contextRecall: 0.5 }, durationMs: 7 }),
    ];
    const { status, stdout } = await compare(base, after);
    expect(stdout.split('\n')[0]).toBe(
      '2 cells compared: identical apart from timings and context tokens (1 with concurrent sessions on their status and error only)',
    );
    expect(status).toBe(0);
  });

  it('names a figure that moved in any other cell, and a concurrent cell that failed, and exits 1', async () => {
    const moved = await compare(base, [cell('plain/buffer', { recall: { contextRecall: 0.5 } }), base[1]]);
    expect(moved.stdout).toContain('plain/buffer.recall.contextRecall: 1 vs 0.5');
    expect(moved.status).toBe(1);
    const failed = await compare(base, [
      base[0],
      cell('concurrent-edits/buffer', { interleaved: true, status: 'error', error: 'boom' }),
    ]);
    expect(failed.stdout).toContain('concurrent-edits/buffer.status: "ok" vs "error"');
    expect(failed.status).toBe(1);
  });
});
