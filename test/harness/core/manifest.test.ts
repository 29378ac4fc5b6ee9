import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MANIFEST_FILE, removeOwnFiles, StagedDir, writeManifest } from '../../../harness/core/manifest.js';

const tempDir = () => mkdtemp(path.join(os.tmpdir(), 'membench-manifest-'));

describe('removeOwnFiles', () => {
  it('removes the files the manifest lists and the folders left empty, nothing else', async () => {
    const dir = await tempDir();
    mkdirSync(path.join(dir, 'charts', 'sub'), { recursive: true });
    mkdirSync(path.join(dir, 'only-ours'));
    for (const name of ['a.json', 'charts/a.png', 'only-ours/b.png', 'mine.txt', 'charts/sub/x.txt'])
      writeFileSync(path.join(dir, name), name);
    await writeManifest(dir, 'test', ['a.json', 'charts/a.png', 'only-ours/b.png']);
    expect(await removeOwnFiles(dir)).toEqual([
      'a.json',
      path.join('charts', 'a.png'),
      path.join('only-ours', 'b.png'),
    ]);
    expect(readdirSync(dir, { recursive: true }).map(String).sort()).toEqual([
      'charts',
      path.join('charts', 'sub'),
      path.join('charts', 'sub', 'x.txt'),
      'mine.txt',
    ]);
  });

  it('never leaves the dir, whatever a hand-edited manifest says', async () => {
    const parent = await tempDir();
    const dir = path.join(parent, 'out');
    mkdirSync(dir);
    writeFileSync(path.join(parent, 'outside.txt'), 'x');
    writeFileSync(
      path.join(dir, MANIFEST_FILE),
      JSON.stringify({
        command: 'x',
        files: ['../outside.txt', path.join(parent, 'outside.txt'), 'sub/../../outside.txt'],
      }),
    );
    expect(await removeOwnFiles(dir)).toEqual([]);
    expect(existsSync(path.join(parent, 'outside.txt'))).toBe(true);
  });

  it('uses the fallback names only without a manifest', async () => {
    const dir = await tempDir();
    writeFileSync(path.join(dir, 'results.json'), '{}');
    writeFileSync(path.join(dir, 'other.json'), '{}');
    expect(await removeOwnFiles(dir, ['results.json'])).toEqual(['results.json']);
    expect(readdirSync(dir)).toEqual(['other.json']);
  });
});

describe('StagedDir', () => {
  it('writes nothing into the dir (nor its missing parents) when aborted', async () => {
    const root = await tempDir();
    const staged = await StagedDir.begin(path.join(root, 'a', 'b', 'out'));
    await staged.write('x.yaml', 'x');
    await staged.abort();
    expect(readdirSync(root)).toEqual([]);
  });

  it('commits into a missing dir by renaming, and into an existing one replacing only the previous manifest', async () => {
    const root = await tempDir();
    const out = path.join(root, 'out');
    const first = await StagedDir.begin(out);
    await first.write('old.yaml', 'old');
    await first.write('kept.yaml', 'v1');
    expect(await first.commit('test', true)).toEqual([]);
    writeFileSync(path.join(out, 'mine.yaml'), 'mine');
    const second = await StagedDir.begin(out);
    await second.write('kept.yaml', 'v2');
    expect(await second.commit('test', true)).toEqual(['old.yaml']);
    expect(readdirSync(out).sort()).toEqual([MANIFEST_FILE, 'kept.yaml', 'mine.yaml']);
    expect(readFileSync(path.join(out, 'kept.yaml'), 'utf8')).toBe('v2');
    expect(readdirSync(root)).toEqual(['out']);
  });
});
