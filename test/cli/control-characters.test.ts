/**
 * Control characters in names from the user's files reach the terminal and the reports only as
 * `\uXXXX` escapes: a scenario's `group:` and a probe's `label:` (which the scenario loader takes as
 * any text) and a LongMemEval `question_id` (said in the import summary). An ESC would recolour or
 * retitle the terminal, a BEL ring it, a carriage return overwrite the line or end a Markdown one.
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { membench, ROOT } from './helpers.js';
import { tempDir } from '../helpers/temp-dir.js';

/** Every control character a terminal acts on: C0 but tab and line feed, DEL, C1. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/u;

describe('control characters in names from the user', () => {
  it('are printed and written as escapes by run: its progress, import summary, summary, report.md and report.html', {
    timeout: 60_000,
  }, async () => {
    const dir = await tempDir('membench-controls-');
    const scenario = path.join(dir, 'controls.yaml');
    // YAML's double-quoted escapes: \e is ESC, \a BEL, \r a carriage return.
    await writeFile(
      scenario,
      [
        'name: controls',
        'group: "grp\\e[31mRED\\a\\rOVER"',
        'steps:',
        '  - id: home',
        '    user: I live in Lisbon.',
        '    assistant: Noted.',
        '  - probe: Where do I live?',
        '    expect: [Lisbon]',
        '    label: "lab\\e]0;TITLE\\a"',
        '',
      ].join('\n'),
    );
    const questions = JSON.parse(
      readFileSync(path.join(ROOT, 'fixtures/datasets/longmemeval-sample.json'), 'utf8'),
    ) as Record<string, unknown>[];
    // One imported, one skipped by its question type: the summary names it by its id.
    const dataset = path.join(dir, 'longmemeval.json');
    await writeFile(
      dataset,
      JSON.stringify([
        questions[0],
        { ...questions[1], question_id: 'skip\u001b[2J\u009b1m', question_type: 'nosuch' },
      ]),
    );
    const out = path.join(dir, 'run');
    const result = await membench([
      'run',
      '-c',
      scenario,
      '--dataset',
      `longmemeval:${dataset}`,
      '-s',
      'buffer',
      '-w',
      '1',
      '-o',
      out,
    ]);
    expect(result.code).toBe(0);
    const written = (file: string): string => readFileSync(path.join(out, file), 'utf8');
    const outputs = {
      stdout: result.stdout,
      stderr: result.stderr,
      'report.md': written('report.md'),
      'report.html': written('report.html'),
    };
    for (const [name, text] of Object.entries(outputs))
      expect({ [name]: CONTROL.exec(text)?.[0] }).toEqual({ [name]: undefined });
    // The progress line and the import summary on stderr.
    expect(result.stderr).toContain('(grp\\u001b[31mRED\\u0007\\u000dOVER 1/1 scenarios, done)');
    expect(result.stderr).toContain('    skip\\u001b[2J\\u009b1m: question_type "nosuch" is not one of');
    expect(result.stdout).toContain('leaderboard — group grp\\u001b[31mRED\\u0007\\u000dOVER\n');
    expect(result.stdout).toContain('│ setting │ lab\\u001b]0;TITLE\\u0007 (context / answer recall) │');
    // Markdown ends a line at a carriage return: a space there.
    expect(outputs['report.md']).toContain('### Leaderboard — group grp\\u001b[31mRED\\u0007 OVER\n');
    expect(outputs['report.md']).toContain('  - skipped question-type-unknown: skip\\u001b[2J\\u009b1m: question_type');
    expect(outputs['report.html']).toContain('<h3>Leaderboard — group grp\\u001b[31mRED\\u0007\\u000dOVER</h3>');
    expect(outputs['report.html']).toContain('<td>label: lab\\u001b]0;TITLE\\u0007</td>');
  });
});

describe('control characters in what an error message quotes', () => {
  it('are written as escapes: a path, a flag value, a refused option', { timeout: 60_000 }, async () => {
    const dir = await tempDir('membench-controls-error-');
    const file = path.join(dir, 'bad\u001b[31mred.yaml');
    await writeFile(file, 'x');
    const badFile = await membench(['run', '-c', file, '-o', path.join(dir, 'out')]);
    expect(badFile.code).toBe(2);
    expect(badFile.stderr).toContain(`${path.join(dir, 'bad')}\\u001b[31mred.yaml: invalid scenario`);
    const badSeed = await membench(['run', '--seed', '\u001b]0;TITLE\u0007']);
    expect(badSeed.code).toBe(2);
    expect(badSeed.stderr).toContain('--seed \\u001b]0;TITLE\\u0007: expected a whole number');
    const unknown = await membench(['run', '--colour\r\u001b[2K']);
    expect(unknown.code).toBe(2);
    for (const run of [badFile, badSeed, unknown]) expect(run.stderr).not.toMatch(CONTROL);
  });
});
