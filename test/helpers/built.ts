/**
 * A module of the built library (`dist/`), for tests whose agent processes should start as a user's
 * do: from the bundle and its startup snapshot (about a tenth of a second of CPU each) rather than
 * from the TypeScript sources through tsx (about a second and a half each). Such a test is listed
 * in vitest.config.ts's DIST_TESTS, so it runs in the `cli` project, whose global setup rebuilds a
 * `dist/` older than the sources: it never runs the previous build.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The built counterpart of `source` (a path from the repository root, `harness/run/runner.js`), typed as the source module. */
export async function builtModule<T>(source: string): Promise<T> {
  return (await import(pathToFileURL(path.join(ROOT, 'dist/', source)).href)) as T;
}
