/**
 * `membench validate` end to end: spawns the built CLI (`npm test` builds it first through
 * the `cli` project's setup) on the committed fixtures and checks exit codes and the exact lines printed.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

const BROKEN = 'fixtures/scenarios/broken';
const VALID = 'fixtures/scenarios/valid';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function membench(...args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['bin/membench.js', ...args],
      { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') return reject(error);
        resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
      },
    );
  });
}

const lines = (text: string): string[] => text.split('\n').filter((line) => line.length > 0);

beforeAll(() => {
  if (!existsSync('dist/harness/cli/main.js'))
    throw new Error(
      'the CLI is not built: run "npm run build" (npm test does it when dist/ is older than the sources)',
    );
});

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('membench validate', () => {
  test('the valid fixtures: exit 0, only the warnings of the fixtures made to warn printed', async () => {
    const files = readdirSync(VALID)
      .sort()
      .map((name) => `${VALID}/${name}`);
    const run = await membench('validate', ...files);
    expect(run.stderr).toBe('');
    expect(lines(run.stdout)).toEqual([
      `${VALID}/dates-backwards-warns.yaml:7:9: steps[2].at: warning: 2024-05-01T09:30:00Z is before steps[0].at (2024-05-02): the dates run backwards (the steps are replayed in their order, as written)`,
      `${VALID}/no-probe-warns.yaml:3:3: steps: warning: no probe: nothing asks what the memory kept, so the scenario scores no recall (only tokens and latency are measured): add a probe step`,
      `${VALID}/unknown-key-warns.yaml:6:5: steps[1].hint: warning: unknown key "hint" (ignored)`,
      `${files.length} files checked: ${files.length} valid, 0 invalid`,
    ]);
    expect(run.code).toBe(0);
  });

  test('one invalid file among valid ones makes the whole run exit 2', async () => {
    const run = await membench('validate', `${VALID}/minimal.yaml`, `${BROKEN}/empty.yaml`);
    expect(run.code).toBe(2);
    expect(lines(run.stdout)).toEqual([
      `${BROKEN}/empty.yaml:1:1: (document): file is empty: expected a scenario with \`name\` and \`steps\``,
      '2 files checked: 1 valid, 1 invalid',
    ]);
  });

  test('two files under one name, which a run of both refuses, are refused together at the second name; one file named twice is not', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'membench-validate-'));
    dirs.push(dir);
    const scenario = 'steps:\n  - user: hi\n    assistant: hello\n  - probe: q?\n    expect: [hi]\n';
    writeFileSync(path.join(dir, 'a.yaml'), `name: mine\n${scenario}`);
    writeFileSync(path.join(dir, 'b.yaml'), `# a copy\nname: mine\n${scenario}`);
    writeFileSync(path.join(dir, 'mine.yaml'), scenario); // named by its file name
    const a = path.join(dir, 'a.yaml');
    const run = await membench('validate', a, `${dir}/./a.yaml`, path.join(dir, 'b.yaml'), path.join(dir, 'mine.yaml'));
    expect(lines(run.stdout)).toEqual([
      `${dir}/b.yaml:2:1: name: "mine" is also the name of ${path.relative(process.cwd(), a)}: a run of both refuses them (cell ids would collide): rename one`,
      `${dir}/mine.yaml:1:1: name: "mine" is also the name of ${path.relative(process.cwd(), a)}: a run of both refuses them (cell ids would collide): rename one`,
      '4 files checked: 2 valid, 2 invalid',
    ]);
    expect(run.code).toBe(2);
  });

  test('--max-bytes refuses oversize.yaml by size', async () => {
    const run = await membench('validate', '--max-bytes', '1024', `${BROKEN}/oversize.yaml`);
    expect(run.code).toBe(2);
    expect(lines(run.stdout)).toEqual([
      `${BROKEN}/oversize.yaml:1:1: (document): file is 4618 bytes, over the 1024-byte limit for a scenario`,
      '1 file checked: 0 valid, 1 invalid',
    ]);
  });

  // oversize.yaml is only broken under a small --max-bytes (checked above); every other fixture is
  // broken as is. One process checks them all: one located line per file, in order, then the count;
  // three representative ones to the letter.
  test('every other broken fixture exits 2 with one file:line:col: path: message line each', async () => {
    const files = readdirSync(BROKEN)
      .sort()
      .filter((name) => name !== 'oversize.yaml')
      .map((name) => `${BROKEN}/${name}`);
    const run = await membench('validate', ...files);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe('');
    const out = lines(run.stdout);
    expect(out).toHaveLength(files.length + 1);
    files.forEach((file, index) => {
      const escaped = file.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&');
      expect(out[index], file).toMatch(new RegExp(`^${escaped}:\\d+:\\d+: [^\\s:]+: \\S.*$`, 'u'));
    });
    expect(out).toEqual(
      expect.arrayContaining([
        `${BROKEN}/wrong-type-user.yaml:3:11: steps[0].user: expected the user message, got 42`,
        `${BROKEN}/bad-yaml-indent.yaml:5:4: (document): invalid YAML: All sequence items must start at the same column`,
        `${BROKEN}/evidence-missing-id.yaml:7:22: steps[1].evidence[1]: no step has id "move"`,
      ]),
    );
    expect(out.at(-1)).toBe(`${files.length} files checked: 0 valid, ${files.length} invalid`);
  });
});
