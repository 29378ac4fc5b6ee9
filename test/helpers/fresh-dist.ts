/**
 * Global setup of the `cli` test project: its tests run the built `dist/`, so a test run by hand
 * after editing a source would test the previous build. When a source is newer than the build (or a
 * built entry is missing) it runs `npm run build` first; with MEMBENCH_TEST_NO_BUILD=1 it refuses instead.
 */
import { spawnSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { processAlive } from '../../harness/core/processes.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** What the build reads: the TypeScript sources, the bundlers, the compiler settings. */
const SOURCE_DIRS = ['harness', 'strategies', 'reports'];
const SOURCE_FILES = [
  'index.ts',
  'scripts/bundle-agent.mjs',
  'scripts/bundle-cli.mjs',
  'tsconfig.json',
  'tsconfig.build.json',
];
/** What the CLI tests start: the library entry, the CLI bundle, the agent bundle. */
const ENTRIES = ['dist/index.js', 'dist/cli/main.mjs', 'dist/harness/process/agent-entry.bundle.cjs'];

function* files(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* files(file);
    else if (entry.isFile()) yield file;
  }
}

/**
 * Why `dist/` under `root` is not the build of its sources — a missing entry, or the newest
 * source and the oldest built file when the source is newer — or undefined when it is.
 */
export function staleDist(root: string): string | undefined {
  const missing = ENTRIES.find((entry) => !existsSync(path.join(root, entry)));
  if (missing) return `${missing} is missing`;
  let builtAt = Number.POSITIVE_INFINITY;
  for (const file of files(path.join(root, 'dist'))) builtAt = Math.min(builtAt, statSync(file).mtimeMs);
  const sources = [
    ...SOURCE_DIRS.flatMap((dir) => [...files(path.join(root, dir))].filter((file) => /\.[cm]?ts$/u.test(file))),
    ...SOURCE_FILES.map((file) => path.join(root, file)).filter((file) => existsSync(file)),
  ];
  let newest: { file: string; at: number } | undefined;
  for (const file of sources) {
    const at = statSync(file).mtimeMs;
    if (at > builtAt && (!newest || at > newest.at)) newest = { file, at };
  }
  return newest ? `dist/ is older than ${path.relative(root, newest.file)}` : undefined;
}

/**
 * Runs `work` holding `lock` (a file with the holder's pid): two CLI test runs started together
 * would otherwise both empty dist/ and build into it at once. A lock whose holder is gone is taken over.
 */
export function whileLocked<T>(lock: string, work: () => T, pause = (): void => sleepMs(200)): T {
  mkdirSync(path.dirname(lock), { recursive: true });
  for (;;) {
    try {
      const fd = openSync(lock, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(readFileSync(lock, 'utf8'));
      if (Number.isInteger(holder) && holder > 0 && !processAlive(holder)) rmSync(lock, { force: true });
      else pause(); // the other run's build: nothing to observe but the lock file going away
    }
  }
  try {
    return work();
  } finally {
    rmSync(lock, { force: true });
  }
}

function sleepMs(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

export default function freshDist(): void {
  if (!staleDist(ROOT)) return;
  whileLocked(path.join(ROOT, '.membench', 'dist-build.lock'), () => {
    const stale = staleDist(ROOT); // another run may have built it while this one waited
    if (!stale) return;
    if (process.env.MEMBENCH_TEST_NO_BUILD === '1') throw new Error(`${stale}: run npm run build`);
    process.stderr.write(`${stale}: running npm run build before the CLI tests\n`);
    const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, encoding: 'utf8' });
    if (build.status !== 0)
      throw new Error(`${stale}, and npm run build failed:\n${`${build.stdout}${build.stderr}`.slice(-4000)}`);
  });
}
