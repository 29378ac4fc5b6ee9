/** Where membench is installed, its version and commit: recorded in every results header. */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'membench')
      return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('membench: cannot find its own package.json');
    dir = parent;
  }
}

/** The package root (holds `scenarios/` and `package.json`), from source or from `dist/`. */
export const PACKAGE_ROOT = findRoot();
export const BUILTIN_SCENARIO_DIR = path.join(PACKAGE_ROOT, 'scenarios');
export const MEMBENCH_VERSION = (
  JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }
).version;

/** The git commit membench runs from, or null when it is not a git checkout. */
export function membenchCommit(): string | null {
  try {
    return (
      execFileSync('git', ['rev-parse', 'HEAD'], {
        cwd: PACKAGE_ROOT,
        stdio: ['ignore', 'pipe', 'ignore'],
        timeout: 5000,
      })
        .toString()
        .trim() || null
    );
  } catch {
    return null;
  }
}
