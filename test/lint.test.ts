/** The lint rules and the format check `npm test` runs first (biome.json), checked on files made to break them: an unused import, an import below code, a line over 120 columns. */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');
const BIOME = path.join(ROOT, 'node_modules/.bin/biome');
const dir = mkdtempSync(path.join(os.tmpdir(), 'membench-lint-'));
copyFileSync(path.join(ROOT, 'biome.json'), path.join(dir, 'biome.json'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Lints one file written with `text` under the repository's biome.json (outside git, so without its ignore file). */
function lint(name: string, text: string): { status: number | null; output: string } {
  writeFileSync(path.join(dir, name), text);
  const run = spawnSync(BIOME, ['lint', '--vcs-enabled=false', '--colors=off', name], { cwd: dir, encoding: 'utf8' });
  return { status: run.status, output: run.stdout + run.stderr };
}

describe('lint', () => {
  it('passes a clean file', () => {
    expect(
      lint('clean.ts', "import { readFileSync } from 'node:fs';\nexport const read = readFileSync;\n").status,
    ).toBe(0);
  });

  it('fails on an unused import', () => {
    const { status, output } = lint('unused.ts', "import { readFileSync } from 'node:fs';\nexport const one = 1;\n");
    expect(status).toBe(1);
    expect(output).toContain('noUnusedImports');
  });

  it('fails on an import below other code', () => {
    const { status, output } = lint(
      'late.ts',
      "export const one = 1;\nimport { readFileSync } from 'node:fs';\nexport const read = readFileSync;\n",
    );
    expect(status).toBe(1);
    expect(output).toContain('useImportsFirst');
  });

  it('the format check fails on a line wider than 120 columns and passes the same code formatted', () => {
    const wide = `export const words = [${Array.from({ length: 16 }, (_, index) => `'word${index}'`).join(', ')}];\n`;
    expect(wide.length).toBeGreaterThan(120);
    writeFileSync(path.join(dir, 'wide.ts'), wide);
    const check = () =>
      spawnSync(BIOME, ['format', '--vcs-enabled=false', '--colors=off', 'wide.ts'], { cwd: dir, encoding: 'utf8' });
    expect(check().status).toBe(1);
    spawnSync(BIOME, ['format', '--write', '--vcs-enabled=false', 'wide.ts'], { cwd: dir, encoding: 'utf8' });
    expect(check().status).toBe(0);
    expect(
      readFileSync(path.join(dir, 'wide.ts'), 'utf8')
        .split('\n')
        .every((line) => line.length <= 120),
    ).toBe(true);
  });

  it('runs in npm test before the tests, so .ci/run fails on a violation', () => {
    const scripts = (
      JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts;
    expect(scripts.test).toMatch(/^npm run lint && npm run format:check && /u);
    expect(scripts.lint).toBe('biome lint .');
    expect(scripts['format:check']).toBe('biome format .');
  });
});
