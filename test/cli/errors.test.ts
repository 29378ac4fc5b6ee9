import { execFile } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_JUDGE_PROMPTS_BYTES } from '../../harness/results/judge-prompts.js';
import { flagValues } from '../../harness/run/setting-sources.js';
import { fileSystemProblem } from '../../harness/core/errors.js';
import { membench, ROOT } from './helpers.js';
import { membenchInProcess } from '../helpers/cli-in-process.js';
import { tempDirSync } from '../helpers/temp-dir.js';

const errno = (code: string, file?: string): NodeJS.ErrnoException =>
  Object.assign(new Error(`${code}: boom`), { code, ...(file ? { path: file } : {}) });

describe('file-system errors', () => {
  it('become plain messages naming the path: bad paths exit 2, a full disk exits 1 with its hint', () => {
    expect(fileSystemProblem(errno('ENOSPC', '/runs/a/cells/3.json'), 'resume it')).toMatchObject({
      message: 'no space left on the device holding /runs/a/cells/3.json: resume it',
      exitCode: 1,
    });
    expect(fileSystemProblem(errno('EEXIST', '/runs/file'))).toMatchObject({
      message: '/runs/file already exists and is not a directory (a file?): choose another path',
      exitCode: 2,
    });
    expect(fileSystemProblem(errno('ENOTDIR', '/dev/null/x'))).toMatchObject({
      message: '/dev/null/x: a part of this path is a file, not a directory: choose another path',
      exitCode: 2,
    });
    expect(fileSystemProblem(errno('EACCES', '/root/x'))?.exitCode).toBe(2);
    expect(fileSystemProblem(new Error('not from the file system'))).toBeUndefined();
  });

  it("say where a path in membench's own temp dirs comes from (TMPDIR), and leave the user's own files in /tmp alone", () => {
    const own = path.join(os.tmpdir(), 'membench-run-1-abc', 'cell', 'store.sqlite');
    const source = ['TMPDIR', 'TMP', 'TEMP'].find((name) => process.env[name]);
    const where = source ? `${source}=${process.env[source]}` : `the system's, ${path.resolve(os.tmpdir())}`;
    expect(fileSystemProblem(errno('ENOENT', own))?.message).toBe(
      `no such file or directory: ${own}: membench makes its working dirs in the temp dir (${where}): set TMPDIR to a directory you can write to`,
    );
    expect(fileSystemProblem(errno('ENOSPC', own))?.message).toContain(
      `(${where}): free space there, or set TMPDIR to a disk with room`,
    );
    const users = path.join(os.tmpdir(), 'results', 'a.json');
    expect(fileSystemProblem(errno('ENOENT', users))?.message).toBe(`no such file or directory: ${users}`);
    // A caller's hint knows better (an --out the user chose under /tmp).
    expect(fileSystemProblem(errno('ENOTDIR', own), 'resume it')?.message).toBe(
      `${own}: a part of this path is a file, not a directory: choose another path: resume it`,
    );
  });

  it('a TMPDIR that is no directory stops a run at once, naming the variable (exit 2)', async () => {
    const result = await membench(
      ['run', '-c', 'recipes-en', '-s', 'buffer', '-o', path.join(os.tmpdir(), 'never-written')],
      {
        env: { TMPDIR: '/nonexistent-membench-tmp' },
      },
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^membench: no such file or directory: \/nonexistent-membench-tmp\/membench-run-\S+: membench makes its working dirs in the temp dir \(TMPDIR=\/nonexistent-membench-tmp\): set TMPDIR to a directory you can write to\n$/u,
    );
    expect(existsSync(path.join(os.tmpdir(), 'never-written'))).toBe(false);
  });
});

describe('a command whose work never settles', () => {
  it('exits 1 with a message instead of quietly', async () => {
    // The built module (this project rebuilds a stale dist/): no TypeScript loader to start.
    const script = `import { handled } from ${JSON.stringify(path.join(ROOT, 'dist/harness/cli/errors.js'))}; await handled(() => new Promise(() => undefined))({});`;
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        ['--input-type=module', '-e', script],
        { cwd: ROOT },
        (_error, _stdout, stderr) => resolve({ code: child.exitCode, stderr }),
      );
    });
    expect(result.stderr).toContain(
      'membench: internal error (please report it): the command stopped with its work unfinished (a promise that never settled)',
    );
    expect(result.code).toBe(1);
  });
});

describe('an option that takes one value, given twice', () => {
  it('is refused for every command before it runs, naming the option and both values (-o twice was an internal error)', async () => {
    const dir = tempDirSync('membench-repeated-');
    const [first, second] = [path.join(dir, 'a'), path.join(dir, 'b')];
    const run = await membenchInProcess(['run', '-c', 'recipes-en', '-s', 'buffer', '-o', first, '-o', second]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`membench: --out given 2 times (${first}, ${second}): it takes one value; give it once\n`);
    expect(existsSync(first) || existsSync(second)).toBe(false);
    // Arguments that take a list (validate's files) stay lists.
    const listed = await membenchInProcess(['validate', 'scenarios/recipes-en.yaml', 'scenarios/recipes-zh.yaml']);
    expect(listed.code).toBe(0);
    // The CLI process: the same refusal, exit 2, no stack trace.
    const cli = await membench(['compare', 'a.json', 'b.json', '--max-recall-drop', '0.1', '--max-recall-drop', '0.2']);
    expect(cli.code).toBe(2);
    expect(cli.stderr).toContain('membench: --max-recall-drop given 2 times (0.1, 0.2): it takes one value');
    expect(cli.stderr).not.toMatch(/\n\s+at /u);
  });

  it('is refused for an option with choices and no type too (explain --lang twice printed "### undefined")', async () => {
    const explain = await membenchInProcess(['explain', 'baselines/offline.json', '--lang', 'en', '--lang', 'zh']);
    expect(explain.code).toBe(2);
    expect(explain.stderr).toBe('membench: --lang given 2 times (en, zh): it takes one value; give it once\n');
    expect(explain.stdout).toBe('');
  });
});

describe('a numeric flag with a bad value', () => {
  // run's and tune's shared flags, parsed in this process: the message names the flag and the text typed.
  it.each([
    [{ trials: 'abc' }, '--trials abc: expected a whole number from 1 to 1000'],
    [{ trials: '' }, '--trials needs a value: expected a whole number from 1 to 1000'],
    [{ workers: '1.5' }, '--workers 1.5: expected a whole number from 1 to 1024'],
    [{ seed: 'abc' }, '--seed abc: expected a whole number from 0 to 4294967295'],
    [{ limit: 'ten' }, '--limit ten: expected a whole number >= 1'],
    [{ stretch: '1e400' }, '--stretch 1e400: expected a whole number from 1 to 100000'],
    [{ 'crash-fuzz': 'x' }, '--crash-fuzz x: expected a whole number from 0 to 10000'],
    [{ 'cell-timeout': '5s' }, '--cell-timeout 5s: expected a number from 1 to 604800'],
    [{ concurrency: 'many' }, '--concurrency many: expected a whole number from 1 to 1024'],
    [{ timeout: '1m' }, '--timeout 1m: expected a number from 1 to 3600000'],
    [{ retries: 'three' }, '--retries three: expected a whole number from 0 to 100'],
    [{ 'retrieval-k': '5,x' }, '--retrieval-k 5,x: expected whole numbers >= 1'],
    [{ 'retrieval-k': '0x10' }, '--retrieval-k 0x10: expected whole numbers >= 1'],
    // `-c` with nothing after it (`-c $UNSET`): an empty list, which would have run every default scenario.
    [{ scenario: [] }, '--scenario needs a value (an unset variable?)'],
    [{ strategy: [] }, '--strategy needs a value'],
    [{ question: [] }, '--question needs a value'],
    // `--cache $UNSET`: the store's first write failed on the empty path (ENOENT, link '.N.new' -> '').
    [{ cache: '' }, '--cache is empty (an unset variable?): give the cache file, or --no-cache for no cache'],
  ])('run %j', (flags, message) => {
    expect(() => flagValues(flags, 'run')).toThrow(message);
  });

  // One flag per command through its built command module: the same wording on stderr, exit 2.
  it.each([
    [['run', '--trials', 'abc'], '--trials abc: expected a whole number from 1 to 1000'],
    [['run', '-c', '-s', 'buffer'], '--scenario needs a value (an unset variable?)'],
    [['run', '--recall-threshold', 'high'], '--recall-threshold high: expected a share between 0 and 1'],
    [['tune', '-s', 'window', '-p', 'k', '--values', '1,2', '--target-recall', 'abc'], '--target-recall abc:'],
    [['judge', 'results.json', '--retries', 'abc'], '--retries abc: expected a whole number from 0 to 100'],
    [['judge', 'results.json', '--cache', ' '], '--cache is empty (an unset variable?)'],
    [['report', 'results.json', '--recall-threshold', '2'], '--recall-threshold 2: expected a share between 0 and 1'],
    [['merge', 'a', 'b', '--recall-threshold', 'abc'], '--recall-threshold abc:'],
    [['compare', 'a', 'b', '--max-recall-drop', 'abc'], '--max-recall-drop abc: expected a number from 0 to 1'],
    [['import', 'locomo', 'file.json', '--limit', 'abc'], '--limit abc: expected a whole number >= 1'],
    [['bench', '--questions', 'abc'], '--questions abc: expected a whole number >= 1'],
    [['serve', '--port', 'http'], '--port http: expected a whole number from 0 to 65535'],
    [['validate', 'a.yaml', '--max-bytes', '1MB'], '--max-bytes 1MB: expected a whole number >= 1'],
  ])('membench %j', async (args, message) => {
    const result = await membenchInProcess(args);
    expect(result.stderr).toContain(`membench: ${message}`);
    expect(result.stderr).not.toMatch(/NaN|\n\s+at /u);
    expect(result.code).toBe(2);
  });

  it('through the CLI process: the message on stderr, exit 2, no stack trace', async () => {
    const result = await membench(['run', '--trials', 'abc']);
    expect(result.stderr).toBe('membench: --trials abc: expected a whole number from 1 to 1000\n');
    expect(result.code).toBe(2);
  });
});

describe('inputs that once passed quietly or crashed, refused with the reason', () => {
  // Files the cases read, made once; no case runs anything, so each --out must stay unwritten.
  const dir = tempDirSync('membench-bad-inputs-');
  const LOCOMO = 'locomo:fixtures/datasets/locomo10-sample.json';
  const LONGMEMEVAL = 'longmemeval:fixtures/datasets/longmemeval-sample.json';
  const prompts = path.join(dir, 'prompts.yaml');
  writeFileSync(prompts, 'default: "Q {{question}} A {{response}}"\n');
  const bigPrompts = path.join(dir, 'big-prompts.yaml');
  writeFileSync(bigPrompts, `default: "{{response}} ${'x'.repeat(MAX_JUDGE_PROMPTS_BYTES)}"\n`);
  const latin1Prompts = path.join(dir, 'latin1-prompts.yaml');
  writeFileSync(latin1Prompts, Buffer.from('default: "caf\xe9 {{response}}"\n', 'latin1'));
  const errata = path.join(dir, 'errata.json');
  writeFileSync(errata, '{ "source": 5, "errata": {} }');
  const run = path.join(dir, 'no-run');
  const local = ['--base-url', 'http://127.0.0.1:9/v1'];
  const noEndpoint = { OPENAI_API_KEY: '', OPENAI_BASE_URL: '' };

  it.each([
    [
      ['run', '--protocol', 'longmemeval', '--protocol', 'locomo', '-s', 'bm25', '--dataset', LOCOMO],
      '--protocol given 2 times (longmemeval, locomo): it takes one value; give it once',
    ],
    [
      ['run', '--protocol', 'longmemeval', '-s', 'bm25', '--dataset', LOCOMO],
      `--protocol longmemeval scores LongMemEval's retrieval (a corpus of user turns, has_answer gold): it does not apply to --dataset ${LOCOMO}: use --protocol locomo for that file, or drop --protocol`,
    ],
    [
      ['run', '--protocol', 'locomo', '-s', 'bm25', '--dataset', LONGMEMEVAL],
      `it does not apply to --dataset ${LONGMEMEVAL}: use --protocol longmemeval for that file`,
    ],
    [
      ['run', '--protocol', 'locomo', '-s', 'bm25', '-c', 'recipes-en'],
      "--protocol locomo scores LoCoMo's retrieval (one utterance per document, dia_id evidence): it applies only to the questions of a LoCoMo file (--dataset locomo:FILE), not to recipes-en (built-in) (the run names no --dataset): run it without --protocol",
    ],
    [['run', '--protocol', 'longmemeval', '-s', 'bm25'], '(the run names no --dataset)'],
    [['run', '--protocol-full', '-s', 'bm25', '-c', 'recipes-en'], '--protocol-full: only with --protocol'],
    [
      ['run', '--protocol', 'locomo', '-s', 'bm25', '-c', 'recipes-en', '--dataset', LOCOMO],
      'not to recipes-en (built-in): run it without --protocol',
    ],
    [
      ['run', '--protocol', 'locomo', '-s', 'bm25', '-p', 'bm25.unit=session', '--dataset', LOCOMO],
      "--param bm25.unit=session: --protocol locomo sets unit=message (LoCoMo's dialog recall ranks one utterance per document); unit=session would be scored and labelled as LoCoMo's figures",
    ],
    [
      ['run', '--protocol', 'longmemeval', '-s', 'bm25', '-p', 'bm25.index=all', '--dataset', LONGMEMEVAL],
      "--param bm25.index=all: --protocol longmemeval sets index=user (LongMemEval's corpus is the user turns alone)",
    ],
    [
      ['judge', run, '--judge', 'offline', '--judge-prompts', prompts],
      `--judge-prompts ${prompts}: no LLM judge reads it (the offline judge scores by its rules)`,
    ],
    [
      ['run', '-s', 'buffer', '-c', 'recipes-en', '--judge', 'offline', '--judge-prompts', prompts],
      `--judge-prompts ${prompts}: no LLM judge reads it`,
    ],
    [['run', '-s', 'buffer', '-c', 'recipes-en', '--judge'], '--judge needs a value: offline'],
    [['judge', run, '--judge'], '--judge needs a value: offline'],
    [
      ['judge', run, '--judge', 'openai:x'],
      '--judge openai:x: no endpoint is set: with neither a base URL (--base-url, $OPENAI_BASE_URL) nor an API key (--api-key, $OPENAI_API_KEY) the requests would go to the public https://api.openai.com/v1',
    ],
    [['run', '-s', 'buffer', '-c', 'recipes-en', '--model', 'openai:x'], '--model openai:x: no endpoint is set'],
    [['run', '-s', 'buffer', '-c', 'recipes-en', '--embedder', 'openai:x'], '--embedder openai:x: no endpoint is set'],
    [
      ['judge', run, '--judge', 'openai:x', ...local, '--judge-prompts', bigPrompts],
      `${bigPrompts}:1:1: (document): file is ${MAX_JUDGE_PROMPTS_BYTES + 25} bytes, over the ${MAX_JUDGE_PROMPTS_BYTES}-byte limit for a judge prompts file`,
    ],
    [
      ['judge', run, '--judge', 'openai:x', ...local, '--judge-prompts', latin1Prompts],
      `${latin1Prompts}:1:1: (document): not UTF-8 text`,
    ],
    [
      ['run', '-s', 'buffer', '--dataset', LOCOMO, '--errata', errata],
      `${errata}:1:13: source: expected string, got 5`,
    ],
    // A recall drop is a share of probes: above 1 the gate could never fail.
    [
      ['compare', 'baselines/offline.json', 'baselines/offline.json', '--max-recall-drop', '2'],
      '--max-recall-drop 2: expected a number from 0 to 1',
    ],
    // yargs read a switch given another value than true or false as false.
    [
      ['compare', 'baselines/offline.json', 'baselines/offline.json', '--allow-missing=yes'],
      '--allow-missing=yes: --allow-missing is a switch: give it alone to turn it on (or --no-allow-missing to turn it off); its value, if any, is true or false',
    ],
  ])('membench %j', async (args, message) => {
    const out = path.join(dir, `out-${args.join(' ').length}-${Math.random().toString(36).slice(2)}`);
    const result = await membenchInProcess(args[0] === 'run' ? [...args, '-o', out, '-q'] : args, { env: noEndpoint });
    expect(result.stderr).toContain(message);
    expect(result.stderr).not.toMatch(/internal error|\n\s+at /u);
    expect(result.code).toBe(2);
    expect(existsSync(out)).toBe(false);
  });

  it('through the CLI process: a located message, exit 2, no stack trace, nothing written', async () => {
    const out = path.join(dir, 'out-spawned');
    const result = await membench(['run', '-s', 'buffer', '--dataset', LOCOMO, '--errata', errata, '-o', out, '-q']);
    expect(result.stderr).toBe(
      `membench: ${errata}: not a valid errata file\n${errata}:1:13: source: expected string, got 5\n`,
    );
    expect(result.code).toBe(2);
    expect(existsSync(out)).toBe(false);
  });
});
