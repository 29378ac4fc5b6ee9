import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isMembenchError } from '../../harness/core/errors.js';
import { MANIFEST_FILE } from '../../harness/core/manifest.js';
import { renderRunStepSummary } from '../../reports/github-summary.js';
import { renderJson, renderJsonChunks, writeRunOutput } from '../../reports/index.js';
import { leaderboards } from '../../reports/verdict.js';
import { parseResults, readResults } from '../../harness/results/read.js';
import { FIXTURE_FILE, renameScenario, smallRun } from './fixture.js';
import { tempDir as newTempDir } from '../helpers/temp-dir.js';

const tempDir = () => newTempDir('membench-reports-');

describe('writeRunOutput', () => {
  it('writes results, markdown, html, junit and one PNG per chart', async () => {
    const dir = path.join(await tempDir(), 'run');
    const written = await writeRunOutput(smallRun(), dir, { stepSummary: null });
    expect(readdirSync(dir).sort()).toEqual([
      MANIFEST_FILE,
      'charts',
      'junit.xml',
      'report.html',
      'report.md',
      'results.json',
    ]);
    expect(readdirSync(path.join(dir, 'charts')).sort()).toEqual(
      [
        'latency-load',
        'latency-save',
        'recall-by-distance-exchanges',
        'recall-by-distance-tokens',
        'recall-vs-tokens',
        'sweep-window-k',
        'tokens-preference-corrections',
        'tokens-recipes-zh',
      ].map((id) => `${id}.png`),
    );
    expect(written).toHaveLength(12);
    expect(readdirSync(dir).some((name) => name.endsWith('.tmp'))).toBe(false);
  });

  it('refuses a dir holding a run unless overwriting, and then drops charts the new run no longer has', async () => {
    const dir = await tempDir();
    await writeRunOutput(renameScenario(smallRun(), 'recipes-zh', 'old-scenario'), dir, { stepSummary: null });
    expect(existsSync(path.join(dir, 'charts/tokens-old-scenario.png'))).toBe(true);
    await expect(writeRunOutput(smallRun(), dir, { stepSummary: null })).rejects.toThrow(
      /already holds a run .*--overwrite/u,
    );
    await writeFile(path.join(dir, 'charts/mine.png'), 'not membench');
    await writeRunOutput(smallRun(), dir, { overwrite: true, stepSummary: null });
    expect(existsSync(path.join(dir, 'charts/tokens-old-scenario.png'))).toBe(false);
    expect(readFileSync(path.join(dir, 'charts/mine.png'), 'utf8')).toBe('not membench');
    expect(existsSync(path.join(dir, 'charts/tokens-recipes-zh.png'))).toBe(true);
  });

  it('appends a Markdown summary to the GitHub step summary file, keeping what was there', async () => {
    const dir = await tempDir();
    const summary = path.join(dir, 'step-summary.md');
    await writeFile(summary, '# earlier step\n');
    await writeRunOutput(smallRun(), path.join(dir, 'run'), { stepSummary: summary, recallThreshold: 0.5 });
    const text = readFileSync(summary, 'utf8');
    expect(text.startsWith('# earlier step\n## membench run: ')).toBe(true);
    expect(text).toContain('| recipes-zh | buffer |');
    expect(text).toMatch(/### Failed cells\n\n- `recipes-zh\/window\(k=2\)`: context recall 0\.\d\d/u);
  });

  it('renders a passing run summary without a failed-cells section', () => {
    const markdown = renderRunStepSummary(smallRun());
    expect(markdown).toMatch(/^## membench run: 6 cells passed/u);
    expect(markdown).not.toContain('Failed cells');
  });
});

describe('reading results back', () => {
  it('reads a run dir or a file and keeps the file exactly as written', async () => {
    const dir = await tempDir();
    await writeRunOutput(smallRun(), dir, { stepSummary: null });
    const { result, file } = await readResults(dir);
    expect(file).toBe(path.join(dir, 'results.json'));
    expect(renderJson(result)).toBe(readFileSync(FIXTURE_FILE, 'utf8'));
  });

  it.each([
    ['nil', 'x.json:1:2: not a membench results file: not JSON'],
    [
      '{"cells": []}',
      'x.json: not a membench results file (expected a "header" with "schemaVersion" and a "cells" list)',
    ],
    [
      '{"header": {"schemaVersion": 99}, "cells": []}',
      'x.json: results schema version 99, but this membench reads versions 2, 3, 4, 5, 6 and 7',
    ],
  ])('refuses %s with a clear message', (text, message) => {
    expect(() => parseResults(text, 'x.json')).toThrow(message);
  });

  it('locates where JSON stops, by line and column: a truncated file at its end, a bad token where it is', () => {
    const truncated = `{\n  "header": {"schemaVersion": 7},\n  "cells": [\n    {"id": "a"`;
    expect(() => parseResults(truncated, 'x.json')).toThrow(
      /^x\.json:4:15: not a membench results file: not JSON \(Expected ',' or '\}' after property value\)$/u,
    );
    expect(() => parseResults('{\n  "header": {\n', 'x.json')).toThrow(
      /^x\.json:3:1: not a membench results file: not JSON \(/u,
    );
    // V8 names no position when the text ends inside a value: the end of the text is where it stopped.
    expect(() => parseResults('{\n  "header": tr', 'x.json')).toThrow(
      /^x\.json:2:15: not a membench results file: not JSON \(Unexpected end of JSON input\)$/u,
    );
    expect(() => parseResults('{\n  "header": 1,\n  "cells": [1,, 2]\n}', 'x.json')).toThrow(
      /^x\.json:3:15: not a membench results file: not JSON \(/u,
    );
  });

  it('names the bad field of a damaged results file', () => {
    const damaged = smallRun() as unknown as { cells: { tokens: { contextTotal: unknown } }[] };
    damaged.cells[2]!.tokens.contextTotal = 'many';
    try {
      parseResults(JSON.stringify(damaged), 'x.json');
      expect.unreachable();
    } catch (error) {
      expect(isMembenchError(error) && error.exitCode).toBe(2);
      expect((error as { details: string[] }).details[0]).toMatch(
        /^ {2}cells\[2\] \(id "recipes-zh\/window\(k=4\)"\)\.tokens\.contextTotal: /u,
      );
    }
    const unknownStatus = smallRun() as unknown as { cells: { status: string }[] };
    unknownStatus.cells[1]!.status = 'weird';
    try {
      parseResults(JSON.stringify(unknownStatus), 'x.json');
      expect.unreachable();
    } catch (error) {
      expect((error as { details: string[] }).details[0]).toBe(
        '  cells[1] (id "recipes-zh/window(k=2)").status: expected "ok" or "error", got "weird"',
      );
    }
  });

  it('says what is missing for a path that is not there or a dir without results', async () => {
    const dir = await tempDir();
    await expect(readResults(path.join(dir, 'nope.json'))).rejects.toThrow('nope.json: no such file or directory');
    await expect(readResults(dir)).rejects.toThrow('a directory without results.json');
    // A run stopped before its end: its plan, no results.
    await writeFile(path.join(dir, 'plan.json'), '{}');
    await expect(readResults(dir)).rejects.toThrow(
      `${dir}: a run that did not finish (its plan.json, no results.json): finish it with membench run --resume ${dir}`,
    );
  });

  it('reads a results.json with a byte-order mark, and refuses one that is not UTF-8', async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'results.json');
    const text = renderJson(smallRun());
    await writeFile(file, `\ufeff${text}`);
    expect((await readResults(file)).result.cells).toHaveLength(smallRun().cells.length);
    await writeFile(
      file,
      Buffer.concat([Buffer.from(text.slice(0, 20)), Buffer.from([0xff, 0xfe]), Buffer.from(text.slice(20))]),
    );
    await expect(readResults(file)).rejects.toThrow(
      `${file}: not UTF-8 text (binary data?): results.json is JSON text`,
    );
  });
});

describe('renderJson', () => {
  it("writes keys in the schema's order whatever order the run filled them in, so a re-rendered file is byte-identical", () => {
    const result = smallRun();
    // A run fills some fields late (a crash's recoveryMs after its record exists): put a cell's keys out of order.
    const [first, ...rest] = result.cells;
    const shuffled = {
      ...result,
      cells: [Object.fromEntries(Object.entries(first!).reverse()) as typeof first, ...rest],
    };
    const written = renderJson(shuffled as typeof result);
    expect(written).toBe(renderJson(parseResults(written, 'results.json')));
    expect(written).toBe(renderJson(result));
  });

  it('comes in pieces of one cell at most, so a 300 MB file is never one string in memory', () => {
    const result = smallRun();
    const chunks = [...renderJsonChunks(result)];
    expect(chunks.join('')).toBe(renderJson(result));
    const largestCell = Math.max(...result.cells.map((cell) => JSON.stringify(cell, null, 2).length));
    const header = JSON.stringify(result.header, null, 2).length;
    expect(chunks.length).toBeGreaterThanOrEqual(result.cells.length + 2);
    for (const chunk of chunks) expect(chunk.length).toBeLessThan(Math.max(largestCell * 1.5, header * 1.5 + 2000));
  });

  it("writes compact JSON, one cell per line (indenting a protocol run's rankings tripled its file)", () => {
    const result = smallRun();
    const lines = renderJson(result).trimEnd().split('\n');
    expect(lines).toHaveLength(result.cells.length + 2);
    expect(lines.slice(1, -1).map((line) => JSON.parse(line.replace(/,$/u, '')).id)).toEqual(
      result.cells.map((cell) => cell.id),
    );
    expect(lines.some((line) => line.startsWith(' '))).toBe(false);
  });

  it('writes a cell the schema refuses as it is, and the others in order', () => {
    const result = smallRun();
    const odd = { ...result.cells[0]!, status: 'sideways' } as unknown as (typeof result.cells)[number];
    const written = JSON.parse(renderJson({ ...result, cells: [odd, ...result.cells.slice(1)] }));
    expect(written.cells[0].status).toBe('sideways');
    expect(written.cells.slice(1)).toEqual(JSON.parse(renderJson(result)).cells.slice(1));
  });

  it('writes a run with no cell as an empty list', () => {
    expect(JSON.parse(renderJson({ ...smallRun(), cells: [] })).cells).toEqual([]);
  });
});

describe('leaderboards', () => {
  it('are computed once per results object, for every renderer of a run', () => {
    const result = smallRun();
    expect(leaderboards(result)).toBe(leaderboards(result));
    expect(leaderboards(smallRun())).not.toBe(leaderboards(result));
  });
});
