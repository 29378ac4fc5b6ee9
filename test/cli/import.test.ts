/**
 * `membench import` end to end on the built CLI: scenario files written and valid, the summary
 * printed, and bad input refused with exit 2 and a located message (never a stack trace).
 * import starts no child process: most cases run its built command module in this process
 * (test/helpers/cli-in-process.ts); a CLI process checks one import and one refusal whole.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MANIFEST_FILE } from '../../harness/core/manifest.js';
import { membench } from './helpers.js';
import { membenchInProcess } from '../helpers/cli-in-process.js';
import { tempDir as newTempDir } from '../helpers/temp-dir.js';

const tempDir = () => newTempDir('membench-import-cli-');
const LOCOMO = 'fixtures/datasets/locomo10-sample.json';
const LONGMEMEVAL = 'fixtures/datasets/longmemeval-sample.json';

describe('membench import', () => {
  it('locomo: one scenario file per conversation, all valid, and the summary with reasons', async () => {
    const out = path.join(await tempDir(), 'locomo');
    const result = await membench(['import', 'locomo', LOCOMO, '--out', out]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(readdirSync(out).sort()).toEqual([MANIFEST_FILE, 'locomo-conv-a.yaml', 'locomo-conv-b.yaml']);
    const lines = result.stdout.split('\n');
    expect(lines.slice(0, 2)).toEqual([
      `locomo: 2 conversations read from ${LOCOMO}, 2 scenarios imported`,
      'QA items: 24 read: 11 imported as is, 10 repaired, 3 skipped',
    ]);
    expect(result.stdout).toContain(
      '    conv-a qa[6]: evidence "D1:2; D2:1" holds several ids: split into D1:2, D2:1\n',
    );
    expect(result.stdout).toContain('  category-unknown (1):\n    conv-a qa[18]: category 6 is not one of 1-5\n');
    expect(lines.at(-2)).toBe(`wrote 2 scenario files to ${out}`);
    const validate = await membenchInProcess([
      'validate',
      ...readdirSync(out)
        .filter((name) => name.endsWith('.yaml'))
        .map((name) => path.join(out, name)),
    ]);
    expect(validate.stdout.trim()).toBe('2 files checked: 2 valid, 0 invalid');
    expect(validate.code).toBe(0);
  });

  it('longmemeval with --limit: the first N questions only; a second import into the same dir needs --overwrite', async () => {
    const out = path.join(await tempDir(), 'lme');
    const args = ['import', 'longmemeval', LONGMEMEVAL, '-o', out, '--limit', '3'];
    const first = await membenchInProcess(args);
    expect(first.code).toBe(0);
    expect(readdirSync(out).sort()).toEqual([
      MANIFEST_FILE,
      'longmemeval-6a1eabeb.yaml',
      'longmemeval-7f3a91c2.yaml',
      'longmemeval-gpt4_2655b836.yaml',
    ]);
    expect(first.stdout).toContain('questions: 3 read: 3 imported as is, 0 repaired, 0 skipped');
    const again = await membenchInProcess(args);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`${out} already holds 3 scenario files`);
    expect((await membenchInProcess([...args, '--overwrite'])).code).toBe(0);
  });

  it.each([
    [
      ['import', 'locomo', 'fixtures/datasets/no-such-file.json'],
      'membench: fixtures/datasets/no-such-file.json: cannot read: no such file',
    ],
    [
      ['import', 'locomo', 'fixtures/datasets/broken/locomo-truncated.json'],
      'membench: fixtures/datasets/broken/locomo-truncated.json:7:59: the file ends inside the list, in conversations[0] (truncated?)',
    ],
    [
      ['import', 'locomo', 'fixtures/datasets/broken/locomo-object.json'],
      'membench: fixtures/datasets/broken/locomo-object.json:1:1: expected a JSON list of conversations (the published file is one), found a JSON object: one element alone, or the first line of a JSON Lines file (one object per line), which is not read; `jq -s . FILE > list.json` makes a JSON Lines file the list',
    ],
    [
      ['import', 'longmemeval', LOCOMO],
      `membench: ${LOCOMO}: nothing to import: none of its 2 questions could be imported\nskipped (2):\n  question-id-missing (2):`,
    ],
    [['import', 'locomo', LOCOMO, '--limit', '0'], 'membench: --limit 0: expected a whole number >= 1'],
    [['import', 'squad', LOCOMO], 'Invalid values:'],
  ])('bad input %j: exit 2, a located message, nothing written', async (args, message) => {
    const out = path.join(await tempDir(), 'out');
    // The truncated file as the CLI process (no stack trace leaves it), the others in this one.
    const result = await (args[2]?.endsWith('locomo-truncated.json') ? membench : membenchInProcess)([
      ...args,
      '-o',
      out,
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr).not.toMatch(/\n\s+at /u);
    expect(existsSync(out)).toBe(false);
  });

  it('--overwrite replaces exactly the previous import: its files go, the new ones come, a file of the user stays', async () => {
    const dir = await tempDir();
    const out = path.join(dir, 'data');
    expect((await membenchInProcess(['import', 'locomo', LOCOMO, '-o', out])).code).toBe(0);
    const earlier = readdirSync(out)
      .filter((name) => name.endsWith('.yaml'))
      .sort();
    await writeFile(path.join(out, 'my-notes.yaml'), 'mine\n');
    await mkdir(path.join(out, 'sub'));
    await writeFile(path.join(out, 'sub', 'x.txt'), 'mine\n');
    const args = ['import', 'longmemeval', LONGMEMEVAL, '--limit', '2'];
    expect((await membenchInProcess([...args, '-o', path.join(dir, 'alone')])).code).toBe(0);
    const imported = readdirSync(path.join(dir, 'alone'))
      .filter((name) => name.endsWith('.yaml'))
      .sort();
    const second = await membenchInProcess([...args, '-o', out, '--overwrite']);
    expect(second.stderr).toBe('');
    expect(second.code).toBe(0);
    expect(second.stdout).toContain(
      `wrote 2 scenario files to ${out} (removed 2 files of the earlier import there: ${earlier.join(', ')})`,
    );
    expect(readdirSync(out).sort()).toEqual([MANIFEST_FILE, ...imported, 'my-notes.yaml', 'sub'].sort());
    expect(readFileSync(path.join(out, 'sub', 'x.txt'), 'utf8')).toBe('mine\n');
    expect(JSON.parse(readFileSync(path.join(out, MANIFEST_FILE), 'utf8'))).toEqual({
      command: 'membench import',
      files: imported,
    });
  });

  it('--overwrite on a dir without a manifest (an older membench) removes nothing and names what stays', async () => {
    const out = path.join(await tempDir(), 'old');
    expect((await membenchInProcess(['import', 'locomo', LOCOMO, '-o', out])).code).toBe(0);
    await rm(path.join(out, MANIFEST_FILE));
    await mkdir(path.join(out, 'sub'));
    await writeFile(path.join(out, 'sub', 'x.txt'), 'mine\n');
    const overwrite = ['import', 'longmemeval', LONGMEMEVAL, '--limit', '1', '-o', out, '--overwrite'];
    const result = await membenchInProcess(overwrite);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe(
      `warning: ${out} has no ${MANIFEST_FILE} (written by an older membench, or not by membench), so --overwrite removes nothing there: ` +
        `3 other files stay (locomo-conv-a.yaml, locomo-conv-b.yaml, ${path.join('sub', 'x.txt')}), written over only where a new file has the same name; remove them by hand if they are an old run's\n`,
    );
    expect(readdirSync(out)).toEqual(expect.arrayContaining(['locomo-conv-a.yaml', 'locomo-conv-b.yaml']));
    // With the manifest this import wrote, the next --overwrite says nothing.
    const again = await membenchInProcess(overwrite);
    expect(again.stderr).toBe('');
  });

  it('an import that fails after some conversations (trailing garbage) writes nothing, and leaves an earlier import whole', async () => {
    const dir = await tempDir();
    const garbage = path.join(dir, 'garbage.json');
    await writeFile(garbage, `${readFileSync(LOCOMO, 'utf8')}\n garbage`);
    const fresh = await membenchInProcess(['import', 'locomo', garbage, '-o', path.join(dir, 'new', 'out')]);
    expect(fresh.code).toBe(2);
    expect(fresh.stderr).toContain(`${garbage}:`);
    expect(fresh.stderr).toContain('unexpected text after the end of the list');
    expect(fresh.stderr).toContain('nothing was written');
    expect(readdirSync(dir)).toEqual(['garbage.json']);

    const out = path.join(dir, 'lme');
    expect((await membenchInProcess(['import', 'longmemeval', LONGMEMEVAL, '-o', out, '--limit', '1'])).code).toBe(0);
    const before = readdirSync(out).sort();
    expect((await membenchInProcess(['import', 'locomo', garbage, '-o', out, '--overwrite'])).code).toBe(2);
    expect(readdirSync(out).sort()).toEqual(before);
    expect(readdirSync(dir).sort()).toEqual(['garbage.json', 'lme']);
  });
});
