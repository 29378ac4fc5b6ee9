/**
 * package.json as npm reads it: every dependency with an install script (the lockfile's
 * `hasInstallScript`) is approved in `allowScripts`, so installs keep working once npm runs
 * only approved scripts (npm 11 warns about the rest; a later npm skips them); and every runtime
 * dependency is one the shipped code imports, so a user's install carries nothing only tests use.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');
const read = (file: string): Record<string, unknown> =>
  JSON.parse(readFileSync(path.join(ROOT, file), 'utf8')) as Record<string, unknown>;

/** `node_modules/a/node_modules/@s/b` → `@s/b`. */
const packageName = (location: string): string =>
  location.slice(location.lastIndexOf('node_modules/') + 'node_modules/'.length);

describe('package.json', () => {
  it('approves the install scripts of every dependency that has one, and only approves installed packages', () => {
    const lock = read('package-lock.json') as {
      packages: Record<string, { version?: string; hasInstallScript?: boolean }>;
    };
    const approvals = (read('package.json').allowScripts ?? {}) as Record<string, boolean>;
    const withScripts = Object.entries(lock.packages).flatMap(([location, info]) =>
      location && info.hasInstallScript ? [{ name: packageName(location), version: info.version }] : [],
    );
    expect(withScripts.map((item) => item.name)).toEqual(expect.arrayContaining(['better-sqlite3', 'hnswlib-node']));
    // An entry is the package name, or name@version (a pinned approval).
    const approved = (name: string, version: string | undefined): boolean =>
      approvals[name] === true || (version !== undefined && approvals[`${name}@${version}`] === true);
    expect(withScripts.filter((item) => !approved(item.name, item.version))).toEqual([]);
    const installed = new Set(Object.keys(lock.packages).filter(Boolean).map(packageName));
    expect(
      Object.keys(approvals)
        .map((key) => key.replace(/(?<=.)@.*$/u, ''))
        .filter((name) => !installed.has(name)),
    ).toEqual([]);
  });

  it('lists as a dependency only what the shipped code imports (a package only tests use is a devDependency)', () => {
    const { dependencies = {} } = read('package.json') as { dependencies?: Record<string, string> };
    const shipped = ['harness', 'strategies', 'reports', 'scripts', 'bin', 'index.ts'].flatMap((entry) =>
      entry.endsWith('.ts')
        ? [entry]
        : readdirSync(path.join(ROOT, entry), { recursive: true, encoding: 'utf8' }).map((file) =>
            path.join(entry, file),
          ),
    );
    const source = shipped
      .filter((file) => /\.(?:[cm]?[jt]s)$/u.test(file) && !file.endsWith('.d.ts'))
      .map((file) => readFileSync(path.join(ROOT, file), 'utf8'))
      .join('\n');
    const unused = Object.keys(dependencies).filter(
      (name) => !source.includes(`'${name}'`) && !source.includes(`'${name}/`) && !source.includes(`"${name}"`),
    );
    expect(unused).toEqual([]);
  });
});
