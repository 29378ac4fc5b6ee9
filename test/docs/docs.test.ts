/** The docs hold what the code does: a short README linking every page, the strategy table of the registry, the CLI reference of --help. */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as library from '../../index.js';
import { builtinStrategies } from '../../strategies/index.js';
import { currentConfigReference, renderConfigReference } from '../../harness/run/settings-reference.js';
// A plain .mjs script (its types inferred, allowJs): the same generator `node scripts/cli-reference.mjs` runs
import { currentReference, referenceDrift, renderReference } from '../../scripts/cli-reference.mjs';

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

describe('docs/library-api.md', () => {
  const page = read('docs/library-api.md');
  const exported = Object.keys(library).sort();

  it('names every runtime export of the package entry, and exports every name its tables list', () => {
    expect(exported.filter((name) => !page.includes(`\`${name}\``))).toEqual([]);
    const listed = [...page.matchAll(/^\| (`[^|]+`) \|/gmu)].flatMap(([, cell]) =>
      [...cell!.matchAll(/`(\w+)`/gu)].map(([, name]) => name!),
    );
    expect(listed.length).toBeGreaterThan(40);
    expect(listed.filter((name) => !exported.includes(name))).toEqual([]);
  });

  it('keeps the entry curated: what a library user needs, not every internal', () => {
    expect(exported.length).toBeLessThanOrEqual(60);
  });
});

describe('docs/cli.md', () => {
  it('names the command whose reference drifted and the lines that differ, nothing when only wrapping moved', () => {
    const block = (run: string): string =>
      `## \`membench --help\`\n\n\`\`\`\nmembench <command>\n\`\`\`\n\n## \`membench run --help\`\n\n\`\`\`\n${run}\n\`\`\`\n`;
    expect(referenceDrift(block('--seed  the seed\n        [number]'), block('--seed  the seed [number]'))).toBe('');
    expect(
      referenceDrift(block('--seed  the seed\n--trials  trials'), block('--seed  the seed\n--trials  how many trials')),
    ).toBe('membench run --help: differs\n  - --trials trials\n  + --trials how many trials');
  });

  it("holds every command's --help as the built CLI prints it (npm run build && node scripts/cli-reference.mjs regenerates it)", () => {
    const drift = referenceDrift(currentReference(), renderReference());
    expect(
      drift,
      `docs/cli.md drifted from --help: run npm run build && node scripts/cli-reference.mjs\n${drift}`,
    ).toBe('');
    // Two CLI processes (the command list, then every command's help in one process), as the script makes it.
  }, 240_000);
});

describe("docs/scale-out.md's config reference", () => {
  it('holds every config key of the settings table as harness/run/settings.ts renders it (node scripts/cli-reference.mjs regenerates it)', () => {
    expect(
      currentConfigReference(read('docs/scale-out.md')),
      'docs/scale-out.md drifted from the settings table: run npm run build && node scripts/cli-reference.mjs',
    ).toBe(renderConfigReference());
  });
});

describe('comments', () => {
  /** Folders a repository path in a comment starts with. */
  const TOP = /^(?:harness|strategies|reports|scenarios|fixtures|test|docs|scripts|bin|fonts)\//u;
  const SOURCE = /\.(?:[cm]?ts|mjs)$/u;
  const PATH = /(?<![\\\w@/.-])((?:\.{1,2}\/)?[\w.-]+(?:\/[\w.-]+)*\.(?:[cm]?ts|mjs|md|yaml|json))\b/gu;

  /** The text of the comments in one source file: whole-line comments and what follows ` // `. */
  function commentText(text: string): string[] {
    return text.split('\n').map((line) => {
      const trimmed = line.trim();
      if (/^(?:\/\/|\/\*|\*)/u.test(trimmed)) return trimmed;
      const tail = line.indexOf(' // ');
      return tail >= 0 ? line.slice(tail + 4) : '';
    });
  }

  /**
   * The repository files a comment names that do not exist: paths from a top-level folder or
   * relative to the citing file (resolved from its folder upwards), and bare
   * source-file names. Output names (results.json, MEMORY.md) and placeholders (NAME.yaml) are not files of the repository.
   */
  function missingCitations(
    file: string,
    text: string,
    exists: (repoPath: string) => boolean,
    basenames: ReadonlySet<string>,
  ): string[] {
    const missing: string[] = [];
    commentText(text).forEach((comment, index) => {
      for (const [, cited] of comment.matchAll(PATH)) {
        if (/(?:^|\/)[A-Z_]+\.[a-z]+$/u.test(cited!) && !cited!.includes('README')) continue;
        let found: boolean;
        if (!cited!.includes('/')) found = !SOURCE.test(cited!) || basenames.has(cited!);
        else {
          const candidates = [cited!];
          for (let dir = path.dirname(file); dir !== '.'; dir = path.dirname(dir))
            candidates.push(path.join(dir, cited!));
          const relative = cited!.startsWith('.') || !TOP.test(cited!);
          found =
            candidates.some((candidate) => exists(path.normalize(candidate))) ||
            (relative && !SOURCE.test(cited!) && !/\.md$/u.test(cited!));
        }
        if (!found) missing.push(`${file}:${index + 1}: ${cited}`);
      }
    });
    return missing;
  }

  it('finds a moved file on a made-up comment, and lets outputs and placeholders pass', () => {
    const files = new Set(['harness/core/fs.ts', 'strategies/shared/jobs.ts']);
    const exists = (repoPath: string): boolean => files.has(repoPath);
    const text =
      '/** harness/fs.ts and harness/core/fs.ts, shared/jobs.ts, load-scenario.ts, fs.ts */\n// writes results.json and MEMORY.md, reads scenarios/suites/NAME.yaml';
    expect(missingCitations('strategies/x.ts', text, exists, new Set(['fs.ts', 'jobs.ts']))).toEqual([
      'strategies/x.ts:1: harness/fs.ts',
      'strategies/x.ts:1: load-scenario.ts',
    ]);
  });

  it('cite only files the repository holds', () => {
    const tracked = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);
    const basenames = new Set(tracked.map((file) => path.basename(file)));
    const exists = (repoPath: string): boolean => existsSync(path.join(ROOT, repoPath));
    const sources = tracked.filter((file) => SOURCE.test(file) && !file.startsWith('fixtures/'));
    expect(sources.length).toBeGreaterThan(100);
    expect(sources.flatMap((file) => missingCitations(file, read(file), exists, basenames))).toEqual([]);
  });
});

describe('docs are reference, not a lab notebook', () => {
  /**
   * What a log says and a reference page does not: a dated pass or round, a before/after table, a
   * section headed by a date (docs/notes/ is the log that holds them).
   */
  const LOG_LINES: readonly (readonly [RegExp, string])[] = [
    [
      /\b(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|next|previous|earlier|later|last|this|that) (?:pass|round)(?:es|s|'s|es')?\b|\b(?:pass|round) by (?:pass|round)\b/iu,
      'a pass or round of measuring',
    ],
    [/^#+ .*\b\d{4}-\d{2}-\d{2}\b/u, 'a section headed by a date'],
    [/^\|.*\bbefore\b.*\|.*\bafter\b/iu, 'a before/after table'],
  ];
  /**
   * What no page, the log included, may cite: an issue, branch or commit the reader cannot see. A
   * public repository's issue cited as a source (`owner/repo issue 27`) is a source, and stays.
   */
  const UNSEEN: readonly (readonly [RegExp, string])[] = [
    [/(?<![\w.-]+\/[\w.-]+ )\b[Ii]ssue(?:s|'s)?\b|(?<![A-Z]{2,}|[\w.-]+\/[\w.-]+ issue)(?:^|[\s(])#\d+\b/u, 'an issue'],
    [/\bbranch(?:es)?\b|\bworktree\b/iu, 'a branch'],
    [/\b(?:commit|main(?:'s)?|at|build|HEAD)\s+`?[0-9a-f]{7,40}\b|\(`?[0-9a-f]{7,40}`?[),;]/u, 'a commit'],
  ];

  /** Each line of `text` that matches one of `patterns`: `page:line: what: the line`. */
  function matching(patterns: typeof LOG_LINES, page: string, text: string): string[] {
    return text
      .split('\n')
      .flatMap((line, index) =>
        patterns
          .filter(([pattern]) => pattern.test(line))
          .map(([, what]) => `${page}:${index + 1}: ${what}: ${line.trim().slice(0, 100)}`),
      );
  }
  const logLines = (page: string, text: string): string[] => matching([...LOG_LINES, ...UNSEEN], page, text);

  it('finds each kind of log line in a made-up page, and lets a cited source and an id through', () => {
    const page = [
      '### Fourth pass (2026-12-02): timed quiet',
      'Measured at load 2, round by round.',
      '| run | before: CPU | after: CPU |',
      'Against the issue’s target; see #27. Main at 8b3442a, this branch.',
      'The same code (05b3254) in a second worktree.',
      'The paper’s figures, as quoted in xiaowu0162/LongMemEval issue #27.',
      'One question alone: `--question a11281a2`, reported as `longmemeval-a11281a2`.',
      'A calibration round every second; the report passes the threshold; words cut as UAX #29 says.',
    ].join('\n');
    expect(logLines('x.md', page).map((line) => line.split(': ').slice(0, 2).join(': '))).toEqual([
      'x.md:1: a pass or round of measuring',
      'x.md:1: a section headed by a date',
      'x.md:2: a pass or round of measuring',
      'x.md:3: a before/after table',
      'x.md:4: an issue',
      'x.md:4: a branch',
      'x.md:4: a commit',
      'x.md:5: a branch',
      'x.md:5: a commit',
    ]);
  });

  it('holds none in docs/, README, CONTRIBUTING or ARCHITECTURE; the log in docs/notes/ cites nothing unseen either', () => {
    const pages = [
      ...readdirSync(path.join(ROOT, 'docs'))
        .filter((file) => file.endsWith('.md'))
        .map((file) => `docs/${file}`),
      'README.md',
      'CONTRIBUTING.md',
      'ARCHITECTURE.md',
    ];
    const notes = readdirSync(path.join(ROOT, 'docs/notes')).map((file) => `docs/notes/${file}`);
    expect(pages.length).toBeGreaterThan(10);
    expect([
      ...pages.flatMap((page) => logLines(page, read(page))),
      ...notes.flatMap((page) => matching(UNSEEN, page, read(page))),
    ]).toEqual([]);
  });

  it('prints no issue to a user: no string in the sources cites one', () => {
    const tracked = execFileSync('git', ['ls-files', 'harness', 'reports', 'strategies', 'index.ts'], {
      cwd: ROOT,
      encoding: 'utf8',
    })
      .split('\n')
      .filter((file) => file.endsWith('.ts'));
    const cites = /['"`][^'"`]*\b(?:the issue(?:'s)?|issue #?\d+)\b/iu;
    expect(
      tracked.flatMap((file) =>
        read(file)
          .split('\n')
          .flatMap((line, index) =>
            !/^\s*(?:\/\/|\/\*|\*)/u.test(line) && cites.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [],
          ),
      ),
    ).toEqual([]);
  });
});
