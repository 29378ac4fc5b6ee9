/**
 * The manifest of an output dir: the files membench wrote there, by relative path. `--overwrite`
 * removes exactly those, so a user's own file beside them (notes, a sub-folder) is never touched.
 * A staged dir writes a whole set of files (an import, a generated workload) into a temp dir
 * first and moves it in only once every file is written: a failure leaves the output dir as it was.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { lstat, mkdir, readdir, readFile, realpath, rename, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { isFileSystemError, MembenchError, notWritable } from './errors.js';
import { makeDirs, writeFileAtomic } from './fs.js';

/** The manifest's name in an output dir (a dot file: scenario globs and `-c DIR` never see it). */
export const MANIFEST_FILE = '.membench-files.json';

/** What the manifest holds: the command that wrote the dir and its files, relative to the dir. */
interface Manifest {
  command: string;
  files: string[];
}

/** A relative path that stays inside its dir by its words: anything else in a manifest (edited by hand?) is never removed. */
function insideDir(name: unknown): name is string {
  if (typeof name !== 'string' || name.length === 0 || name.includes('\0') || path.isAbsolute(name)) return false;
  const normal = path.normalize(name);
  return normal !== '..' && !normal.startsWith(`..${path.sep}`) && normal !== '.' && normal !== MANIFEST_FILE;
}

/** Every name the manifest of `dir` lists, as written (undefined without a readable manifest: an older membench, or none). */
async function readManifestEntries(dir: string): Promise<unknown[] | undefined> {
  const text = await readFile(path.join(dir, MANIFEST_FILE), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    const parsed = JSON.parse(text) as Partial<Manifest>;
    return Array.isArray(parsed.files) ? parsed.files : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `file` is `root` or under it (both real paths). */
const isUnder = (file: string, root: string): boolean => file === root || file.startsWith(`${root}${path.sep}`);

/**
 * Why `name` (relative to `dir`, whose real path is `realDir`) must not be removed, or undefined
 * when it may: every folder on the way and the entry itself resolved through symlinks (`realpath`)
 * stay inside the dir. A symlinked folder anywhere on the path (`charts/lnk/victim.txt` where
 * `charts/lnk` points outside) or a symlinked file pointing outside would make a delete leave it.
 */
async function escapesDir(dir: string, realDir: string, name: string): Promise<string | undefined> {
  const file = path.join(dir, name);
  const parent = await realpath(path.dirname(file)).catch(() => undefined);
  if (parent === undefined) return undefined; // nothing there to remove
  if (!isUnder(parent, realDir)) return `its folder resolves to ${parent}, outside ${realDir}`;
  const stat = await lstat(file).catch(() => undefined);
  if (!stat?.isSymbolicLink()) return undefined;
  const target = await realpath(file).catch(() => undefined);
  if (target === undefined) return 'it is a symlink that resolves to nothing';
  return isUnder(target, realDir) ? undefined : `it is a symlink to ${target}, outside ${realDir}`;
}

/** Says on stderr which manifest entry `--overwrite` left alone, and why. */
const warnSkipped = (dir: string, name: string, why: string): void => {
  process.stderr.write(`warning: --overwrite left ${JSON.stringify(name)} in ${dir} alone: ${why}\n`);
};

/** Records `names` (relative to `dir`) as what `command` wrote into `dir`. */
export async function writeManifest(dir: string, command: string, names: readonly string[]): Promise<void> {
  const manifest: Manifest = {
    command,
    files: [...new Set(names.map((name) => path.normalize(name)).filter(insideDir))].sort(),
  };
  await writeFileAtomic(path.join(dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
}

/**
 * Removes the files membench wrote into `dir` (its manifest, or `fallback` names when it has none),
 * except those in `keep`, then the sub-dirs that removal left empty, then the manifest itself unless
 * files were kept. Only plain files and symlinks are removed, never a folder's contents, and
 * nothing whose real path leaves `dir` (`..`, an absolute path, a symlinked folder on the way, a
 * symlink to a file outside): such an entry is skipped, with a warning (`onSkip`, default stderr).
 * Returns the names removed.
 */
export async function removeOwnFiles(
  dir: string,
  fallback: readonly string[] = [],
  keep: ReadonlySet<string> = new Set(),
  onSkip: (dir: string, name: string, why: string) => void = warnSkipped,
): Promise<string[]> {
  const entries = (await readManifestEntries(dir)) ?? fallback;
  const realDir = await realpath(dir).catch(() => undefined);
  if (realDir === undefined) return [];
  const removed: string[] = [];
  const parents = new Set<string>();
  for (const name of entries) {
    if (!insideDir(name)) {
      if (typeof name === 'string' && name !== MANIFEST_FILE)
        onSkip(dir, name, 'the manifest names a path outside the dir');
      continue;
    }
    if (keep.has(path.normalize(name))) continue;
    const escape = await escapesDir(dir, realDir, name);
    if (escape !== undefined) {
      onSkip(dir, name, escape);
      continue;
    }
    const file = path.join(dir, name);
    const stat = await lstat(file).catch(() => undefined);
    if (!stat || stat.isDirectory()) continue;
    await rm(file, { force: true });
    removed.push(name);
    for (let parent = path.dirname(name); parent !== '.'; parent = path.dirname(parent)) parents.add(parent);
  }
  // Deepest first; rmdir refuses a folder that still holds anything (a user's file) and a symlink: it stays.
  for (const parent of [...parents].sort((a, b) => b.length - a.length))
    await rmdir(path.join(dir, parent)).catch(() => undefined);
  if (keep.size === 0) await rm(path.join(dir, MANIFEST_FILE), { force: true });
  return removed;
}

/** Every file under `dir`, relative to it, but membench's dot files (the manifest, the dir's lock). */
async function filesUnder(dir: string, prefix = ''): Promise<string[]> {
  const entries = await readdir(path.join(dir, prefix), { withFileTypes: true }).catch(() => []);
  const files: string[] = [];
  for (const entry of entries) {
    const name = path.join(prefix, entry.name);
    if (prefix === '' && entry.name.startsWith('.membench')) continue;
    if (entry.isDirectory()) files.push(...(await filesUnder(dir, name)));
    else files.push(name);
  }
  return files.sort();
}

/**
 * The warning for `--overwrite` on a dir that holds files but no manifest (written by a membench
 * older than manifests, or not by membench): nothing there is removed, `replaced` (names or
 * folders) and files of the same name as the new ones are written over, every other file stays
 * and is named. Undefined when the dir has a manifest, does not exist or holds nothing else.
 */
async function overwriteWithoutManifestWarning(dir: string, replaced: readonly string[]): Promise<string | undefined> {
  if (!existsSync(dir) || existsSync(path.join(dir, MANIFEST_FILE))) return undefined;
  const isReplaced = (name: string): boolean =>
    replaced.some((own) => name === own || name.startsWith(`${own}${path.sep}`));
  const depth = (name: string): number => name.split(path.sep).length;
  // The dir's own files first (a user's notes), then those in folders (charts/).
  const kept = (await filesUnder(dir))
    .filter((name) => !isReplaced(name))
    .sort((a, b) => depth(a) - depth(b) || a.localeCompare(b));
  if (kept.length === 0) return undefined;
  const shown = kept.slice(0, 5).join(', ') + (kept.length > 5 ? `, ... (${kept.length - 5} more)` : '');
  const but = replaced.length ? ` but ${replaced.join(', ')}` : '';
  return (
    `warning: ${dir} has no ${MANIFEST_FILE} (written by an older membench, or not by membench), so --overwrite removes nothing there${but}: ` +
    `${kept.length} other ${kept.length === 1 ? 'file stays' : 'files stay'} (${shown}), written over only where a new file has the same name; remove them by hand if they are an old run's`
  );
}

/** With `overwrite`, hands `warn` what a dir without a manifest keeps (overwriteWithoutManifestWarning), if anything. */
export async function warnOverwriteWithoutManifest(
  dir: string,
  overwrite: boolean,
  replaced: readonly string[],
  warn: (warning: string) => unknown,
): Promise<void> {
  if (!overwrite) return;
  const warning = await overwriteWithoutManifestWarning(dir, replaced);
  if (warning) warn(warning);
}

/**
 * A set of files written into a temp dir beside `dir`, then moved into `dir` at once by
 * `commit` (replacing the files of the previous manifest there), or dropped by `abort`.
 */
export class StagedDir {
  private readonly names: string[] = [];

  private constructor(
    readonly dir: string,
    private readonly staging: string,
    /** The first parent folder `begin` had to create, removed again by `abort`. */
    private readonly createdParent: string | undefined,
  ) {}

  /**
   * A staging dir beside `dir` (same file system, so the moves are renames). `named` is how the
   * user gave `dir` (`--out DIR`): a parent that takes no new dir is said of it, not of the
   * staging dir the user never heard of.
   */
  static async begin(dir: string, named = dir): Promise<StagedDir> {
    const parent = path.dirname(path.resolve(dir));
    const createdParent = makeDirs(parent);
    const staging = path.join(
      parent,
      `.${path.basename(path.resolve(dir))}.staging-${process.pid}-${randomBytes(4).toString('hex')}`,
    );
    try {
      await mkdir(staging);
    } catch (error) {
      const denied = isFileSystemError(error) ? notWritable(error) : undefined;
      if (denied === undefined) throw error;
      throw new MembenchError(
        'BAD_PATH',
        `${named}: cannot write in ${parent} (${denied}), where the files are written before they move in together: choose a dir whose parent you can write in`,
      );
    }
    return new StagedDir(dir, staging, createdParent);
  }

  /** How many files are staged. */
  get count(): number {
    return this.names.length;
  }

  async write(name: string, content: string | Uint8Array): Promise<void> {
    await writeFileAtomic(path.join(this.staging, name), content);
    this.names.push(name);
  }

  /**
   * Moves the staged files into `dir`: a missing dir is the staging dir renamed; an existing one
   * first loses the files its manifest lists (with `replace`), then takes each staged file.
   * Returns the names an earlier manifest listed that were removed.
   */
  async commit(command: string, replace: boolean): Promise<string[]> {
    await writeManifest(this.staging, command, this.names);
    if (!existsSync(this.dir)) {
      await rename(this.staging, this.dir);
      return [];
    }
    const removed = replace
      ? await removeOwnFiles(this.dir, [], new Set(this.names.map((name) => path.normalize(name))))
      : [];
    for (const name of [...this.names, MANIFEST_FILE]) {
      await mkdir(path.dirname(path.join(this.dir, name)), { recursive: true });
      await rename(path.join(this.staging, name), path.join(this.dir, name));
    }
    await rm(this.staging, { recursive: true, force: true });
    return removed.filter((name) => !this.names.includes(name));
  }

  /** Drops everything staged: the output dir is left as it was. */
  async abort(): Promise<void> {
    await rm(this.staging, { recursive: true, force: true });
    if (this.createdParent === undefined) return;
    // Empty folders only, from the staging dir's parent up to the first one begin created.
    for (
      let folder = path.dirname(this.staging);
      folder.startsWith(this.createdParent);
      folder = path.dirname(folder)
    ) {
      if (
        !(await rmdir(folder).then(
          () => true,
          () => false,
        ))
      )
        break;
    }
  }
}
