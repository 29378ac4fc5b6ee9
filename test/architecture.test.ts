/**
 * The folder map of ARCHITECTURE.md, checked: every source file imports only folders below its
 * own (type imports and dynamic imports included), and no import cycle exists anywhere.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');

/** Folders in import order; a folder may import its own files and folders of a lower rank only. */
const LAYERS: { folder: string; rank: number; mayAlsoImport?: string[] }[] = [
  { folder: 'harness/core', rank: 0 },
  { folder: 'harness/scenarios', rank: 1 },
  { folder: 'harness/models', rank: 1 },
  { folder: 'strategies', rank: 2 },
  { folder: 'harness/results', rank: 2 },
  { folder: 'harness/agent', rank: 3 },
  { folder: 'harness/process', rank: 4 },
  { folder: 'harness/run', rank: 5 },
  { folder: 'reports', rank: 6 },
  { folder: 'harness/bench', rank: 7 },
  { folder: 'harness/commands', rank: 7 },
  { folder: 'harness/cli', rank: 8 },
  { folder: 'index.ts', rank: 9 },
];
/** reports/ sees only results and core, whatever its rank. */
const ONLY: Record<string, string[]> = { reports: ['harness/core', 'harness/results', 'reports'] };

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(rel);
    return /\.[cm]?ts$/u.test(entry.name) ? [rel] : [];
  });
}

/** Relative imports of a file (static, type-only, re-exports, side-effect and dynamic), resolved to repo paths. */
export function importsOf(file: string, text = readFileSync(path.join(ROOT, file), 'utf8')): string[] {
  const specs = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gmu)].map(
    (match) => match[1]!,
  );
  // A `.js` specifier names its `.ts` source, `.cjs` a `.cts`, `.mjs` a `.mts`.
  return specs.map((spec) => path.normalize(path.join(path.dirname(file), spec)).replace(/\.([cm]?)js$/u, '.$1ts'));
}

function layerOf(file: string): (typeof LAYERS)[number] | undefined {
  return LAYERS.filter((layer) => file === layer.folder || file.startsWith(`${layer.folder}/`)).sort(
    (a, b) => b.folder.length - a.folder.length,
  )[0];
}

/** The files of strategies/ that see every strategy: the registry and the loader of user strategies. */
const SEES_STRATEGIES = ['strategies/index.ts', 'strategies/loader.ts'];

/** Imports of one strategy file by another file of strategies/ (the shared modules and stores included): strategies are plug-ins. */
export function strategyCrossImports(edges: ReadonlyMap<string, readonly string[]>): string[] {
  const isStrategyFile = (file: string): boolean =>
    /^strategies\/[^/]+\.ts$/u.test(file) && file !== 'strategies/types.ts' && !SEES_STRATEGIES.includes(file);
  const problems: string[] = [];
  for (const [file, imports] of edges) {
    if (!file.startsWith('strategies/') || SEES_STRATEGIES.includes(file)) continue;
    for (const target of imports)
      if (target !== file && isStrategyFile(target))
        problems.push(`${file} imports the strategy ${target}: move what they share to strategies/shared/`);
  }
  return problems;
}

/** Every file's imports, for the whole source tree. */
function graph(): Map<string, string[]> {
  const files = [...sourceFiles('harness'), ...sourceFiles('strategies'), ...sourceFiles('reports'), 'index.ts'];
  return new Map(files.map((file) => [file, importsOf(file)]));
}

/** Import edges that go against the order of LAYERS. */
export function layerViolations(edges: ReadonlyMap<string, readonly string[]>): string[] {
  const problems: string[] = [];
  for (const [file, imports] of edges) {
    const from = layerOf(file);
    if (!from) {
      problems.push(`${file}: not in any layer of ARCHITECTURE.md`);
      continue;
    }
    for (const target of imports) {
      const to = layerOf(target);
      if (!to) {
        problems.push(`${file} imports ${target}, which is in no layer`);
        continue;
      }
      if (to.folder === from.folder) continue;
      const only = ONLY[from.folder];
      const allowed = only ? only.includes(to.folder) : to.rank < from.rank;
      if (!allowed) problems.push(`${file} (${from.folder}) imports ${target} (${to.folder})`);
    }
  }
  return problems;
}

/** Strongly connected components of more than one file (or a file importing itself): the cycles. */
export function importCycles(edges: ReadonlyMap<string, readonly string[]>): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (node: string): void => {
    indices.set(node, index);
    low.set(node, index++);
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node) ?? []) {
      if (!edges.has(next)) continue;
      if (!indices.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, indices.get(next)!));
    }
    if (low.get(node) === indices.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (edges.get(node) ?? []).includes(node)) cycles.push(component.sort());
    }
  };
  for (const node of edges.keys()) if (!indices.has(node)) visit(node);
  return cycles;
}

describe('the import graph', () => {
  const edges = graph();

  it('finds the imports of every kind', () => {
    const text = `import a from './a.js';\nimport type { B } from '../b.js';\nexport { c } from './c.js';\nimport './d.js';\nconst e = await import('./e.js');`;
    expect(importsOf('harness/run/x.ts', text)).toEqual([
      'harness/run/a.ts',
      'harness/b.ts',
      'harness/run/c.ts',
      'harness/run/d.ts',
      'harness/run/e.ts',
    ]);
    expect(importsOf('harness/process/x.cts', `import a from './a.cjs';\nimport b from '../run/b.mjs';`)).toEqual([
      'harness/process/a.cts',
      'harness/run/b.mts',
    ]);
  });

  it('flags an upward import and a cycle on a made-up graph', () => {
    const made = new Map([
      ['harness/core/a.ts', ['harness/run/b.ts']],
      ['harness/run/b.ts', ['harness/core/a.ts']],
      ['reports/c.ts', ['harness/run/b.ts']],
    ]);
    expect(layerViolations(made)).toEqual([
      'harness/core/a.ts (harness/core) imports harness/run/b.ts (harness/run)',
      'reports/c.ts (reports) imports harness/run/b.ts (harness/run)',
    ]);
    expect(importCycles(made)).toEqual([['harness/core/a.ts', 'harness/run/b.ts']]);
  });

  it('imports only downwards', () => {
    expect(layerViolations(edges)).toEqual([]);
  });

  it('flags a strategy importing another strategy, or a shared module importing one', () => {
    const made = new Map([
      ['strategies/bm25.ts', ['strategies/vector.ts', 'strategies/types.ts', 'strategies/shared/knobs.ts']],
      ['strategies/shared/knobs.ts', ['strategies/window.ts']],
      ['strategies/index.ts', ['strategies/bm25.ts', 'strategies/vector.ts']],
    ]);
    expect(strategyCrossImports(made)).toEqual([
      'strategies/bm25.ts imports the strategy strategies/vector.ts: move what they share to strategies/shared/',
      'strategies/shared/knobs.ts imports the strategy strategies/window.ts: move what they share to strategies/shared/',
    ]);
  });

  it('no strategy imports another strategy (only the registry and the loader see them all)', () => {
    expect(strategyCrossImports(edges)).toEqual([]);
  });

  it('has no import cycle, type imports included', () => {
    expect(importCycles(edges)).toEqual([]);
  });

  it('reads .cts and .mts sources too', () => {
    expect([...edges.keys()]).toContain('harness/process/agent-snapshot.cts');
  });

  it('keeps at most a few files loose in harness/', () => {
    const loose = readdirSync(path.join(ROOT, 'harness'), { withFileTypes: true }).filter((entry) => entry.isFile());
    expect(loose.map((entry) => entry.name)).toEqual([]);
  });
});

describe('entry files of child processes', () => {
  const ENTRIES = [
    'harness/process/agent-entry.ts',
    'harness/process/agent-boot.ts',
    'harness/process/agent-snapshot.cts',
    'harness/run/pool-entry.ts',
    'harness/models/server-worker.ts',
    'reports/chart-worker.ts',
  ];

  it.each(ENTRIES)('%s exports nothing and no other file imports it', (entry) => {
    expect(readFileSync(path.join(ROOT, entry), 'utf8')).not.toMatch(/^\s*export\b/mu);
    const importers = [...graph()].filter(([, imports]) => imports.includes(entry)).map(([file]) => file);
    expect(importers).toEqual([]);
  });

  it('importing the library registers no process listeners', async () => {
    // The built library, as `import 'membench'` loads it (npm test builds dist first).
    const { execFileSync } = await import('node:child_process');
    const events = [
      'message',
      'disconnect',
      'exit',
      'beforeExit',
      'SIGINT',
      'SIGTERM',
      'uncaughtException',
      'unhandledRejection',
    ];
    const script = `
      const events = ${JSON.stringify(events)};
      const before = events.map((event) => process.listenerCount(event));
      await import(${JSON.stringify(path.join(ROOT, 'dist/index.js'))});
      const added = events.filter((event, i) => process.listenerCount(event) !== before[i]);
      console.log(JSON.stringify(added));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(JSON.parse(out.trim().split('\n').at(-1)!)).toEqual([]);
  });

  it('the bundled agent (built by npm test) evaluates no LangChain runnables, no langsmith and no LangChain adapter: what a process per crash loads stays small', () => {
    const bundle = readFileSync(path.join(ROOT, 'dist/harness/process/agent-entry.bundle.cjs'), 'utf8');
    expect(bundle).toContain('// node_modules/@langchain/core/dist/messages/human.js');
    for (const left of [
      '// node_modules/langsmith/',
      '// node_modules/@langchain/core/dist/runnables/',
      '// dist/strategies/langchain.js',
      '// node_modules/@langchain/core/dist/messages/transformers.js',
    ])
      expect(bundle).not.toContain(left);
    expect(Buffer.byteLength(bundle)).toBeLessThan(1_550_000);
  });
});
