import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { MANIFEST_FILE, removeOwnFiles, StagedDir, writeManifest } from '../../../harness/core/manifest.js';
import { tempDir as newTempDir } from '../../helpers/temp-dir.js';

const tempDir = () => newTempDir('membench-manifest-');

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
    const skipped: string[] = [];
    expect(await removeOwnFiles(dir, [], new Set(), (_dir, name) => skipped.push(name))).toEqual([]);
    expect(existsSync(path.join(parent, 'outside.txt'))).toBe(true);
    expect(skipped).toEqual(['../outside.txt', path.join(parent, 'outside.txt'), 'sub/../../outside.txt']);
  });

  it('never follows a symlink out of the dir, at any level of the path, and says which entry it skipped', async () => {
    const parent = await tempDir();
    const outside = path.join(parent, 'outside');
    const dir = path.join(parent, 'out');
    mkdirSync(path.join(outside, 'deep'), { recursive: true });
    mkdirSync(path.join(dir, 'charts', 'a', 'b'), { recursive: true });
    mkdirSync(path.join(dir, 'inner'));
    writeFileSync(path.join(outside, 'victim.txt'), 'keep me');
    writeFileSync(path.join(outside, 'deep', 'victim.txt'), 'keep me');
    // A symlinked folder at the first, second and fourth level, a symlinked file, and a chain (inside, then out).
    symlinkSync(outside, path.join(dir, 'lnk'));
    symlinkSync(outside, path.join(dir, 'charts', 'lnk'));
    symlinkSync(path.join(outside, 'deep'), path.join(dir, 'charts', 'a', 'b', 'lnk'));
    symlinkSync(path.join(outside, 'victim.txt'), path.join(dir, 'file-link.txt'));
    symlinkSync(path.join(dir, 'charts', 'lnk'), path.join(dir, 'inner', 'chain'));
    // A symlink that stays inside the dir is membench's to remove (the link, not its target).
    writeFileSync(path.join(dir, 'charts', 'own.png'), 'png');
    symlinkSync(path.join(dir, 'charts', 'own.png'), path.join(dir, 'own-link.png'));
    const escaping = [
      'lnk/victim.txt',
      'charts/lnk/victim.txt',
      'charts/a/b/lnk/victim.txt',
      'file-link.txt',
      'inner/chain/victim.txt',
      'inner/chain/deep/victim.txt',
    ];
    await writeManifest(dir, 'test', [...escaping, 'own-link.png']);
    const skipped: Array<[string, string]> = [];
    const removed = await removeOwnFiles(dir, [], new Set(), (_dir, name, why) => skipped.push([name, why]));
    expect(removed).toEqual(['own-link.png']);
    expect(skipped.map(([name]) => name).sort()).toEqual(escaping.map((name) => path.normalize(name)).sort());
    for (const [, why] of skipped) expect(why).toMatch(/outside|resolves to nothing/u);
    expect(readFileSync(path.join(outside, 'victim.txt'), 'utf8')).toBe('keep me');
    expect(readFileSync(path.join(outside, 'deep', 'victim.txt'), 'utf8')).toBe('keep me');
    expect(existsSync(path.join(dir, 'charts', 'own.png'))).toBe(true);
  });

  it('warns on stderr by default when it skips an entry', async () => {
    const parent = await tempDir();
    const dir = path.join(parent, 'out');
    mkdirSync(path.join(dir, 'charts'), { recursive: true });
    writeFileSync(path.join(parent, 'victim.txt'), 'keep me');
    symlinkSync(parent, path.join(dir, 'charts', 'lnk'));
    await writeManifest(dir, 'test', ['charts/lnk/victim.txt']);
    const written: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => (written.push(String(chunk)), true));
    try {
      expect(await removeOwnFiles(dir)).toEqual([]);
    } finally {
      spy.mockRestore();
    }
    expect(existsSync(path.join(parent, 'victim.txt'))).toBe(true);
    expect(written.join('')).toContain(
      `warning: --overwrite left "${path.join('charts', 'lnk', 'victim.txt')}" in ${dir} alone: its folder resolves to ${realpathSync(parent)}, outside ${realpathSync(dir)}`,
    );
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
