/**
 * `membench run --judge offline` and `membench judge RUN --judge openai:NAME` on the built CLI:
 * a LongMemEval-format file run and judged offline, then re-judged by an LLM judge played by a
 * local OpenAI-wire server, twice (the second time from the cache: no request), with agreement
 * per category in the console and every judgement with its raw reply in results.json.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseResults } from '../../harness/results/read.js';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../helpers/fake-openai-server.js';
import { LOCK_FILE } from '../../harness/run/out-lock.js';
import { membench, ROOT, startMembench, until } from './helpers.js';
import { membenchInProcess } from '../helpers/cli-in-process.js';
import { allOk } from '../helpers/cells.js';
import { tempDir } from '../helpers/temp-dir.js';

const DATASET = path.join(ROOT, 'fixtures/datasets/longmemeval-sample.json');
/**
 * Its first four questions: one each of single-session-user, single-session-assistant,
 * knowledge-update and temporal-reasoning, enough for agreement per category and for an offline
 * judge that gets some answers right and some wrong.
 */
const SAMPLE = ['--dataset', `longmemeval:${DATASET}`, '--limit', '4'];
const env = { OPENAI_API_KEY: '', OPENAI_BASE_URL: '' };

let server: FakeOpenAIServer;
let dir: string;
beforeAll(async () => {
  // A judge that says yes to every other request, so its verdicts differ from the offline judge's on some answers.
  let count = 0;
  server = await startFakeOpenAIServer({ chat: () => (count++ % 2 === 0 ? 'Yes.' : 'no') });
  dir = await tempDir('membench-judge-cli-');
});
afterAll(async () => {
  await server.close();
});

/**
 * One plain run of the LongMemEval sample (no judge), made on first use; tests that judge it or lock
 * its dir work on their own copy, so each starts from the same results.json without paying for the
 * run again.
 */
let plain: Promise<string> | undefined;
const plainRun = (): Promise<string> =>
  (plain ??= (async () => {
    const out = path.join(dir, 'plain');
    const run = await membench(['run', ...SAMPLE, '-s', 'buffer', '-w', '1', '-q', '-o', out], { env });
    expect(run.code, run.stderr).toBe(0);
    return out;
  })());

const results = (out: string) => allOk(parseResults(readFileSync(path.join(out, 'results.json'), 'utf8'), out));

describe('membench judge', () => {
  it('run --judge offline judges every answer; judge --judge openai:NAME adds a second judge, κ per category, and costs no request the second time', {
    timeout: 180_000,
  }, async () => {
    const out = path.join(dir, 'run');
    const run = await membench(['run', ...SAMPLE, '-s', 'buffer', '--judge', 'offline', '-w', '1', '-q', '-o', out], {
      env,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('offline judge');
    const first = results(out);
    const probes = first.cells.flatMap((cell) => cell.probes);
    expect(probes.length).toBeGreaterThan(0);
    expect(
      probes.every(
        (probe) =>
          probe.judgements?.length === 1 &&
          probe.judgements[0]!.judge === 'offline' &&
          probe.judgements[0]!.raw.length > 0,
      ),
    ).toBe(true);
    // Gold travels with the answer, so the run can be judged again without its dataset.
    expect(
      probes.filter((probe) => probe.category !== 'abstention').every((probe) => (probe.expect ?? []).length > 0),
    ).toBe(true);

    const cache = path.join(dir, 'cache.sqlite');
    const args = ['judge', out, '--judge', 'openai:judge-model', '--base-url', server.baseUrl, '--cache', cache];
    const judged = await membenchInProcess(args, { env });
    expect(judged.code, judged.stderr).toBe(0);
    expect(server.requests.length).toBe(probes.length);
    const second = results(out);
    const live = second.judges!.find((entry) => entry.judge === 'openai:judge-model')!;
    expect(live).toMatchObject({ requests: probes.length, cached: 0, judged: probes.length });
    const raws = second.cells.flatMap((cell) =>
      cell.probes.map((probe) => probe.judgements!.find((judgement) => judgement.judge === 'openai:judge-model')!.raw),
    );
    expect(new Set(raws)).toEqual(new Set(['Yes.', 'no']));
    // Both judges, agreement per category with κ, in the console and the reports.
    expect(judged.stdout).toContain('judge agreement: offline judge (A) vs openai:judge-model judge (B)');
    expect(judged.stdout).toMatch(/κ/u);
    for (const label of ['temporal-reasoning', 'knowledge-update', 'all']) expect(judged.stdout).toContain(label);
    // What it wrote, on one line as run says it: the run dir, its reports, the charts counted.
    expect(judged.stdout).toMatch(
      /^wrote [^\n]*run\/ \(results\.json, report\.md, report\.html, junit\.xml and \d+ charts in charts\/\)$/mu,
    );
    const html = readFileSync(path.join(out, 'report.html'), 'utf8');
    expect(html).toMatch(/<details><summary>\d+ answers on which offline judge and openai:judge-model judge disagree/u);
    expect(readFileSync(path.join(out, 'report.md'), 'utf8')).toContain('### Judge agreement');

    const again = await membenchInProcess(args, { env });
    expect(again.code, again.stderr).toBe(0);
    expect(server.requests.length).toBe(probes.length);
    expect(results(out).judges!.find((entry) => entry.judge === 'openai:judge-model')).toMatchObject({
      requests: 0,
      cached: probes.length,
    });
  });

  it('run --errata corrects the gold the run scores and prints the ceiling it implies, both counted', {
    timeout: 180_000,
  }, async () => {
    const out = path.join(dir, 'errata-run');
    const errata = path.join(ROOT, 'fixtures/errata/locomo-sample.json');
    const run = await membench(
      [
        'run',
        '--dataset',
        `locomo:${path.join(ROOT, 'fixtures/datasets/locomo10-sample.json')}`,
        '--errata',
        errata,
        '-s',
        'buffer',
        '-w',
        '1',
        '-q',
        '-o',
        out,
      ],
      { env },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(
      `errata ${errata}: 2 gold answers corrected, 1 question dropped, 1 naming no imported question`,
    );
    const result = results(out);
    expect(result.errata).toEqual([
      {
        file: errata,
        unused: 1,
        byLabel: expect.objectContaining({
          'single-hop': { questions: 8, corrected: 1, dropped: 1 },
          temporal: { questions: 4, corrected: 1, dropped: 0 },
        }),
      },
    ]);
    const probes = result.cells.flatMap((cell) => cell.probes);
    expect(probes.find((probe) => probe.question === 'When did Maya sign up for the pottery class?')!.expect).toEqual([
      '8 May 2023',
    ]);
    expect(probes.some((probe) => probe.question === "What is the name of Ana's dog?")).toBe(false);
    const report = readFileSync(path.join(out, 'report.md'), 'utf8');
    expect(report).toContain('### Errata and the ceiling they imply');
    expect(report).toContain(`| ${errata} | single-hop | 8 | 1 | 1 | 75.0 % |`);
    expect(report).toContain(`| ${errata} | all | 21 | 2 | 1 | 85.7 % |`);
  });

  it('refuses a bad judge spec and a bad prompts file with a located error, exit 2, before judging', async () => {
    const out = path.join(dir, 'run');
    const bad = await membenchInProcess(['judge', out, '--judge', 'gpt-4o'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--judge gpt-4o: expected "offline" or "openai:NAME"');
    const prompts = path.join(dir, 'prompts.yaml');
    await writeFile(
      prompts,
      'default: |\n  Q {{question}} A {{response}}\ntemporl: |\n  {{response}}\nabstention: "{{answer}}"\n',
    );
    const located = await membench(
      ['judge', out, '--judge', 'openai:judge-model', '--base-url', server.baseUrl, '--judge-prompts', prompts],
      { env },
    );
    expect(located.code).toBe(2);
    expect(located.stderr).toContain(`${prompts}:3:1: temporl: unknown question type "temporl"`);
    expect(located.stderr).toContain(`${prompts}:5:13: abstention: unknown placeholder {{answer}}`);
    expect(located.stderr).not.toMatch(/\n\s+at /u);
    // A results file without cells is refused as report refuses it, and left as it was.
    const empty = path.join(dir, 'empty.json');
    const results = JSON.parse(await readFile(path.join(out, 'results.json'), 'utf8')) as { cells: unknown[] };
    await writeFile(empty, JSON.stringify({ ...results, cells: [] }));
    const before = await readFile(empty, 'utf8');
    const none = await membenchInProcess(['judge', empty, '--judge', 'offline'], { env });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(`${empty} has no cells: nothing to report`);
    expect(await readFile(empty, 'utf8')).toBe(before);
  });
});

describe('gates on an empty measurement', () => {
  it('a run whose errata dropped every question is refused, saying so: its conversations would measure nothing', {
    timeout: 180_000,
  }, async () => {
    const out = path.join(dir, 'errata-drop-all');
    const errata = path.join(ROOT, 'fixtures/errata/locomo-sample-drop-all.json');
    const dataset = `locomo:${path.join(ROOT, 'fixtures/datasets/locomo10-sample.json')}`;
    const args = ['run', '--dataset', dataset, '--errata', errata, '-s', 'buffer', '-w', '1', '-q', '-o', out];
    const run = await membench([...args, '--recall-threshold', '0.9'], { env });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain('nothing to import: none of its 2 conversations could be imported');
    expect(run.stderr).toContain(`errata ${errata}: 0 gold answers corrected, 21 questions dropped`);
    expect(existsSync(path.join(out, 'results.json'))).toBe(false);
  });

  it('a judge whose replies are neither yes nor no warns, fails --judge-threshold, and the footer names only the judges that ran', {
    timeout: 180_000,
  }, async () => {
    const garbled = await startFakeOpenAIServer({ chat: () => 'It depends on the context.' });
    try {
      const out = path.join(dir, 'garbled');
      cpSync(await plainRun(), out, { recursive: true });
      const n = results(out).cells.flatMap((cell) => cell.probes).length;
      const judge = ['judge', out, '--judge', 'openai:garbled', '--base-url', garbled.baseUrl, '--no-cache'];
      const warned = await membenchInProcess(judge, { env });
      expect(warned.code, warned.stderr).toBe(0);
      expect(warned.stderr).toContain(
        `warning: openai:garbled judge could not read ${n} of its ${n} replies as yes or no (100 %, more than 20 %): its accuracy is not a measurement`,
      );
      const report = readFileSync(path.join(out, 'report.md'), 'utf8');
      expect(report).toContain('openai:garbled judge');
      expect(report).not.toContain('offline judge');
      const gated = await membenchInProcess([...judge, '--judge-threshold', '0.5'], { env });
      expect(gated.code).toBe(1);
      expect(gated.stderr).toMatch(
        /FAILED judge: openai:garbled judge could not read .*--judge-threshold 0\.5 cannot pass on it/u,
      );
      // A judge that read its replies passes a threshold it meets, and fails one it does not.
      expect(
        (await membenchInProcess(['judge', out, '--judge', 'offline', '--judge-threshold', '0'], { env })).code,
      ).toBe(0);
      const strict = await membenchInProcess(['judge', out, '--judge', 'offline', '--judge-threshold', '1'], { env });
      expect(strict.code).toBe(1);
      expect(strict.stderr).toMatch(
        /FAILED judge: offline judge: answer accuracy 0\.\d\d \(\d+\/\d+\) is below --judge-threshold 1/u,
      );
      // Without a judge the threshold gates nothing: refused.
      const alone = await membenchInProcess(
        [
          'run',
          '--dataset',
          `longmemeval:${DATASET}`,
          '-s',
          'buffer',
          '--judge-threshold',
          '0.5',
          '-o',
          path.join(dir, 'x'),
        ],
        { env },
      );
      expect(alone.code).toBe(2);
      expect(alone.stderr).toContain('--judge-threshold 0.5: no judge runs; name one with --judge');
    } finally {
      await garbled.close();
    }
  });
});

describe('membench judge and the dir lock', () => {
  it('stops on SIGINT or SIGTERM with "interrupted", exit 130, the lock released and results.json as it was', {
    timeout: 180_000,
  }, async () => {
    const hanging = await startFakeOpenAIServer();
    try {
      const out = path.join(dir, 'interrupted');
      cpSync(await plainRun(), out, { recursive: true });
      const before = readFileSync(path.join(out, 'results.json'), 'utf8');
      for (const signal of ['SIGINT', 'SIGTERM'] as const) {
        const seen = hanging.requests.length;
        hanging.enqueue({ kind: 'hang' });
        const judge = startMembench(
          ['judge', out, '--judge', 'openai:hangs', '--base-url', hanging.baseUrl, '--no-cache', '--concurrency', '1'],
          { env },
        );
        // The event: the first judge request reached the server (and hangs there), so the lock is held.
        await until(() => hanging.requests.length > seen, judge);
        expect(existsSync(path.join(out, LOCK_FILE))).toBe(true);
        judge.child.kill(signal);
        expect(await judge.exited).toEqual({ code: 130, signal: null });
        expect(judge.stderr()).toContain(
          `interrupted: nothing written (${path.join(out, 'results.json')} is as it was)`,
        );
        expect(existsSync(path.join(out, LOCK_FILE))).toBe(false);
        expect(readFileSync(path.join(out, 'results.json'), 'utf8')).toBe(before);
      }
    } finally {
      await hanging.close();
    }
  });

  it('refuses a lock path that is a directory (exit 2, no internal error), and never tells judge to change an --out it does not have', {
    timeout: 180_000,
  }, async () => {
    const out = path.join(dir, 'locked');
    cpSync(await plainRun(), out, { recursive: true });
    const lock = path.join(out, LOCK_FILE);
    mkdirSync(lock);
    for (const args of [
      ['judge', out],
      ['run', '-c', 'recipes-en', '-s', 'window', '-q', '-o', out, '--overwrite'],
    ]) {
      const refused = await membenchInProcess(args, { env });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toBe(
        `membench: ${lock} is a directory, not membench's lock file (membench writes a small JSON file there): move it away, then run again\n`,
      );
    }
    rmdirSync(lock);
    // Held by a live process (this test's own): judge names the dir, and no flag to change.
    writeFileSync(
      lock,
      JSON.stringify({ pid: process.pid, host: os.hostname(), command: 'membench run', started: 'earlier' }),
    );
    const busy = await membench(['judge', out], { env });
    expect(busy.code).toBe(2);
    expect(busy.stderr).toBe(
      `membench: ${out} is in use by another run: membench run (pid ${process.pid}, started earlier): wait for it to finish; if that process is not membench, remove ${lock}\n`,
    );
  });
});
