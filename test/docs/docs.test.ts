/** The docs hold what the code does: a short README linking every page, the strategy table of the registry, the CLI reference of --help. */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { builtinStrategies } from '../../strategies/index.js';
// @ts-expect-error a plain .mjs script without types: the same generator `node scripts/cli-reference.mjs` runs
import { currentReference, renderReference } from '../../scripts/cli-reference.mjs';

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (file: string): string => readFileSync(path.join(ROOT, file), 'utf8');

describe('README', () => {
  const readme = read('README.md');

  it('is the front door, not the manual: at most 200 lines', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(200);
  });

  it('links every page under docs/', () => {
    const pages = readdirSync(path.join(ROOT, 'docs')).filter((file) => file.endsWith('.md'));
    expect(pages.length).toBeGreaterThan(5);
    expect(pages.filter((page) => !readme.includes(`](docs/${page})`))).toEqual([]);
  });
});

describe('docs/strategies.md', () => {
  /** The rows of the first table: name (first column) and the knobs column. */
  function tableRows(): { name: string; knobs: string }[] {
    const lines = read('docs/strategies.md').split('\n');
    const start = lines.findIndex((line) => line.startsWith('| name |'));
    const rows: { name: string; knobs: string }[] = [];
    for (const line of lines.slice(start + 2)) {
      if (!line.startsWith('|')) break;
      const cells = line.split(' | ');
      rows.push({ name: cells[0]!.replace(/^\|\s*`?|`$/gu, ''), knobs: cells[2] ?? '' });
    }
    return rows;
  }

  it('lists exactly the registered built-ins, in registry order', () => {
    expect(tableRows().map((row) => row.name)).toEqual(builtinStrategies.map((definition) => definition.name));
  });

  it("names every knob of each strategy's options", () => {
    const missing = tableRows().flatMap(({ name, knobs }) => {
      const definition = builtinStrategies.find((item) => item.name === name)!;
      const shape = (definition.options as unknown as { shape?: Record<string, unknown> }).shape ?? {};
      return Object.keys(shape)
        .filter((knob) => !knobs.includes(`\`${knob}\``))
        .map((knob) => `${name}.${knob}`);
    });
    expect(missing).toEqual([]);
  });
});

describe('docs/cli.md', () => {
  // Whitespace collapsed: yargs wraps at its own width, which a longer core count in `run --help` can shift.
  const flat = (text: string): string => text.replace(/\s+/gu, ' ');

  it("holds every command's --help as the built CLI prints it (node scripts/cli-reference.mjs regenerates it)", () => {
    expect(flat(currentReference())).toBe(flat(renderReference()));
  });
});
