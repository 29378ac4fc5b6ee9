/**
 * The TypeScript in the docs compiles against the code as it is: every ```ts block of docs/, README.md,
 * CONTRIBUTING.md and ARCHITECTURE.md is type-checked with the repository's compiler settings, as a
 * module of its own (`import … from 'membench'` resolves to the built package). A block marked
 * ```ts fragment is skipped; ```ts path=strategies/NAME.ts is checked as if it were that file (its
 * relative imports resolve from there). The library API's example also runs.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

interface Snippet {
  /** Where it is written: page and the line of its opening fence. */
  page: string;
  line: number;
  code: string;
  /** The path it is checked as (absolute). */
  file: string;
}

/** The ```ts blocks of a Markdown text, with what their info strings say. */
export function snippetsOf(page: string, text: string): Snippet[] {
  const snippets: Snippet[] = [];
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const fence = /^```(?:ts|typescript)(?:\s+(.*))?$/u.exec(lines[index]!);
    if (!fence) continue;
    const words = (fence[1] ?? '').split(/\s+/u).filter(Boolean);
    const end = lines.indexOf('```', index + 1);
    if (end < 0) throw new Error(`${page}:${index + 1}: a code block that is never closed`);
    const at = words.find((word) => word.startsWith('path='))?.slice('path='.length);
    const name = `${page.replace(/[^\w]+/gu, '-')}-${index + 1}.snippet.ts`;
    if (!words.includes('fragment'))
      snippets.push({
        page,
        line: index + 1,
        code: lines.slice(index + 1, end).join('\n'),
        file: at ? path.join(ROOT, path.dirname(at), name) : path.join(ROOT, name),
      });
    index = end;
  }
  return snippets;
}

/** The pages whose snippets are checked. */
function pages(): string[] {
  const docs = (dir: string): string[] =>
    readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory()
        ? docs(path.join(dir, entry.name))
        : entry.name.endsWith('.md')
          ? [path.join(dir, entry.name)]
          : [],
    );
  return [...docs('docs'), 'README.md', 'CONTRIBUTING.md', 'ARCHITECTURE.md'];
}

/**
 * Type-checks snippets in one program (each a module: `export {}` is appended) with tsconfig.json's
 * settings, unused names allowed; returns each error in a snippet as `page:line: message`, at the page's line.
 */
export function typeErrors(snippets: readonly Snippet[]): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(
    path.join(ROOT, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    },
  )!;
  const options: ts.CompilerOptions = {
    ...config.options,
    noEmit: true,
    noUnusedLocals: false,
    noUnusedParameters: false,
  };
  const virtual = new Map(snippets.map((snippet) => [snippet.file, `${snippet.code}\nexport {};\n`]));
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.fileExists = (file) => virtual.has(file) || fileExists(file);
  host.readFile = (file) => virtual.get(file) ?? readFile(file);
  host.getSourceFile = (file, language, ...rest) => {
    const text = virtual.get(file);
    return text === undefined ? getSourceFile(file, language, ...rest) : ts.createSourceFile(file, text, language);
  };
  const program = ts.createProgram({ rootNames: [...virtual.keys()], options, host });
  const bySnippet = new Map(snippets.map((snippet) => [snippet.file, snippet]));
  // The snippets' own diagnostics only: the checker types what they use of the code, not every body
  // of every file they import (an error located in the code is not a snippet's, and tsc checks the code).
  const diagnostics = [...virtual.keys()].flatMap((file) =>
    ts.getPreEmitDiagnostics(program, program.getSourceFile(file)),
  );
  return diagnostics.flatMap((diagnostic) => {
    const snippet = diagnostic.file ? bySnippet.get(diagnostic.file.fileName) : undefined;
    if (!snippet || diagnostic.start === undefined) return [];
    const { line } = diagnostic.file!.getLineAndCharacterOfPosition(diagnostic.start);
    return [
      `${snippet.page}:${snippet.line + 1 + line}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`,
    ];
  });
}

describe('TypeScript in the docs', () => {
  const snippets = pages().flatMap((page) => snippetsOf(page, readFileSync(path.join(ROOT, page), 'utf8')));

  it('finds the snippets, skips fragments and places a snippet where its path says', () => {
    expect(snippets.map((snippet) => snippet.page)).toEqual(
      expect.arrayContaining(['docs/library-api.md', 'docs/own-strategy.md', 'CONTRIBUTING.md']),
    );
    const text = '```ts\nconst a = 1;\n```\n\n```ts fragment\nthis is not code\n```\n```ts path=strategies/x.ts\n```\n';
    const found = snippetsOf('docs/x.md', text);
    expect(found.map((snippet) => [snippet.line, snippet.code])).toEqual([
      [1, 'const a = 1;'],
      [8, ''],
    ]);
    expect(path.relative(ROOT, found[1]!.file)).toBe(path.join('strategies', 'docs-x-md-8.snippet.ts'));
  });

  it('compile against the code and the built package', () => {
    const wrong = snippetsOf(
      'docs/wrong.md',
      "```ts\nimport { runBenchmark } from 'membench';\nconst n: number = runBenchmark;\n```\n",
    );
    const errors = typeErrors([...snippets, ...wrong]);
    // The checker is not vacuous: the planted error is found, at its line of the page.
    expect(errors.filter((error) => error.startsWith('docs/wrong.md:'))).toEqual([
      expect.stringMatching(/^docs\/wrong\.md:3: Type .* is not assignable to type 'number'/u),
    ]);
    expect(errors.filter((error) => !error.startsWith('docs/wrong.md:'))).toEqual([]);
  }, 240_000);

  it("docs/library-api.md's example runs: two settings of window and buffer, an output dir, a comparison", async () => {
    const [example] = snippets.filter((snippet) => snippet.page === 'docs/library-api.md');
    const dist = pathToFileURL(path.join(ROOT, 'dist/index.js')).href;
    const js = ts
      .transpileModule(example!.code, {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      })
      .outputText.replace(/from 'membench'/gu, `from '${dist}'`);
    const dir = path.join(os.tmpdir(), 'library-api');
    try {
      await mkdir(dir, { recursive: true });
      await writeFile(path.join(dir, 'example.mjs'), js);
      const { stdout } = await promisify(execFile)(process.execPath, ['example.mjs'], { cwd: dir });
      const cells = stdout.split('\n').filter((line) => /^(?:buffer|window)/u.test(line));
      expect(cells.map((line) => line.split(' ').slice(0, 2).join(' '))).toEqual([
        'buffer ok',
        'window(k=2) ok',
        'window(k=8) ok',
      ]);
      expect(existsSync(path.join(dir, 'out/run-1/results.json'))).toBe(true);
      expect(stdout).toContain('OK: no regression');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 240_000);
});
