/**
 * The shared importer machinery: the streaming JSON list reader and its located errors,
 * `importDataset` (what `run --dataset` uses) and the printed summary.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, test } from 'vitest';
import {
  formatImportReport,
  importDataset,
  ImportLog,
  parseDatasetArg,
  yamlBytes,
} from '../../../../harness/scenarios/importers/index.js';
import { MAX_SCENARIO_BYTES } from '../../../../harness/scenarios/load.js';
import type { ScenarioDocument } from '../../../../harness/scenarios/importers/shared.js';
import { JsonNumberText, readJsonList } from '../../../../harness/scenarios/importers/json-stream.js';
import { MembenchError } from '../../../../harness/core/errors.js';
import { tempDirSync } from '../../../helpers/temp-dir.js';

const dir = tempDirSync('membench-import-');
/** What the refusal of a file holding an object says it found. */
const JSON_OBJECT =
  'a JSON object: one element alone, or the first line of a JSON Lines file (one object per line), which is not read; `jq -s . FILE > list.json` makes a JSON Lines file the list';
let files = 0;
function temp(content: string | Buffer): string {
  const file = path.join(dir, `data-${files++}.json`);
  writeFileSync(file, content);
  return file;
}

async function readAll(file: string): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const value of readJsonList(file, 'samples')) out.push(value);
  return out;
}

async function failure(file: string): Promise<MembenchError> {
  const error = await readAll(file).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(MembenchError);
  expect((error as MembenchError).exitCode).toBe(2);
  return error as MembenchError;
}

describe('readJsonList', () => {
  test('reads every element, whatever brackets, commas and escapes strings hold', async () => {
    const values = [
      { text: 'a ] b , c } [ {', quote: 'say "hi" \\ ok' },
      42,
      'plain',
      [1, [2, { x: ']' }]],
      null,
      { nested: { deep: [true, false] } },
    ];
    expect(await readAll(temp(`\uFEFF  ${JSON.stringify(values, null, 1)}\n`))).toEqual(values);
    expect(await readAll(temp('[]'))).toEqual([]);
  });

  test('a number literal a double cannot hold is kept as its text; other numbers stay numbers', async () => {
    const values = await readAll(
      temp(
        '[{"big": 12345678901234567890, "huge": -1e400, "tiny": 1e-400, "zero": 0.000000000000000000, "fine": 12345.5, "long": 1.5000000000000000000, "text": "12345678901234567890 1e400"}]',
      ),
    );
    expect(values).toEqual([
      {
        big: new JsonNumberText('12345678901234567890'),
        huge: new JsonNumberText('-1e400'),
        tiny: new JsonNumberText('1e-400'),
        zero: 0,
        fine: 12345.5,
        long: 1.5,
        text: '12345678901234567890 1e400',
      },
    ]);
    expect((values[0] as { big: unknown }).big).toBeInstanceOf(JsonNumberText);
    // Strings are skipped whole, to their unescaped closing quote: an escaped quote or backslash
    // (even and odd runs) never ends one early, and a string's digits are never a number.
    const raw = String.raw`[{"a": "x\\", "b": 12345678901234567890, "c": "y\"z 12345678901234567890", "d": "\\\"1e400\\", "e": -1e400, "f": "e960 \\\\"}]`;
    const [plain] = JSON.parse(raw) as [Record<string, unknown>];
    expect(plain.c).toBe('y"z 12345678901234567890');
    expect(await readAll(temp(raw))).toEqual([
      { ...plain, b: new JsonNumberText('12345678901234567890'), e: new JsonNumberText('-1e400') },
    ]);
  });

  test('an element larger than one read chunk, with multi-byte characters across chunk borders', async () => {
    const big = { text: '红烧肉'.repeat(400_000), emoji: '😀'.repeat(100_000) };
    expect(await readAll(temp(JSON.stringify([big, { small: 1 }])))).toEqual([big, { small: 1 }]);
  });

  test('bad files: each a MembenchError naming the file and where', async () => {
    const missing = path.join(dir, 'missing.json');
    expect((await failure(missing)).message).toBe(`${missing}: cannot read: no such file`);
    expect((await failure(dir)).message).toBe(`${dir}: not a file`);
    const empty = temp('  \n');
    expect((await failure(empty)).message).toBe(`${empty}: the file is empty: expected a JSON list of samples`);
    const object = temp('{"samples": []}');
    expect((await failure(object)).message).toBe(
      `${object}:1:1: expected a JSON list of samples (the published file is one), found ${JSON_OBJECT}`,
    );
    const number = temp('42\n');
    expect((await failure(number)).message).toBe(
      `${number}:1:1: expected a JSON list of samples (the published file is one), found a JSON number (42)`,
    );
    const word = temp('true');
    expect((await failure(word)).message).toBe(
      `${word}:1:1: expected a JSON list of samples (the published file is one), found JSON true`,
    );
    const truncated = temp('[\n  {"a": 1},\n  {"b": [1, 2');
    expect((await failure(truncated)).message).toBe(
      `${truncated}:3:13: the file ends inside the list, in samples[1] (truncated?)`,
    );
    const trailing = temp('[{"a": 1},\n]');
    expect((await failure(trailing)).message).toBe(`${trailing}:2:1: a trailing comma before "]" is not JSON`);
    const after = temp('[1]\n[2]');
    expect((await failure(after)).message).toBe(`${after}:2:1: unexpected text after the end of the list`);
    const binary = temp(Buffer.from([0x5b, 0x22, 0xff, 0xfe, 0x22, 0x5d]));
    expect((await failure(binary)).message).toBe(`${binary}:1:3: not UTF-8 text: the dataset file is JSON`);
    // Located at the bad byte, lines and columns counted through the text before it.
    const lateBinary = temp(
      Buffer.concat([Buffer.from('[\n  "é",\n  "ab'), Buffer.from([0xc3, 0x28]), Buffer.from('"\n]')]),
    );
    expect((await failure(lateBinary)).message).toBe(`${lateBinary}:3:6: not UTF-8 text: the dataset file is JSON`);
    const endsAfterBreak = temp('[\n  {"a": 1},\n');
    expect((await failure(endsAfterBreak)).message).toBe(
      `${endsAfterBreak}:3:1: the file ends inside the list, in samples[1] (truncated?)`,
    );
  });

  test('a copy that is not the JSON list says what it is: an archive, a Git LFS pointer, an HTML page, JSON Lines', async () => {
    const tarGz = temp(gzipSync(Buffer.from('[{"a": 1}]')));
    expect((await failure(tarGz)).message).toBe(
      `${tarGz}: a gzip file (a .tar.gz or .gz): unpack it (tar -xzf, gunzip) and give the .json file inside: the dataset file is JSON, a list of samples`,
    );
    // A zip's local file header, as `zip locomo10.zip locomo10.json` writes it.
    const zip = temp(Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x00, 0x00]), Buffer.from('[]')]));
    expect((await failure(zip)).message).toBe(
      `${zip}: a zip archive: unzip it and give the .json file inside: the dataset file is JSON, a list of samples`,
    );
    const lfs = temp('version https://git-lfs.github.com/spec/v1\noid sha256:4d7a21\nsize 277383274\n');
    expect((await failure(lfs)).message).toBe(
      `${lfs}:1:1: expected a JSON list of samples (the published file is one), found a Git LFS pointer, not the data (a clone without git-lfs): run \`git lfs pull\` in the clone, or download the file itself`,
    );
    const page = temp('<!DOCTYPE html><html><title>Virus scan warning</title></html>');
    expect((await failure(page)).message).toBe(
      `${page}:1:1: expected a JSON list of samples (the published file is one), found an HTML page (a download link saved its page, not the file?): download the file itself`,
    );
    // A UTF-8 BOM before the list is read past; before a JSON Lines file it changes nothing.
    const jsonl = temp('\uFEFF{"question_id": "q1"}\n{"question_id": "q2"}\n');
    expect((await failure(jsonl)).message).toBe(
      `${jsonl}:1:1: expected a JSON list of samples (the published file is one), found ${JSON_OBJECT}`,
    );
    expect(await readAll(temp('\uFEFF[{"a": 1}]'))).toEqual([{ a: 1 }]);
  });

  test('invalid JSON inside an element is located at the element (or the exact place, when V8 tells it)', async () => {
    const file = temp('[\n  {"ok": true},\n  {\n    "question": "x",\n    "answer": oops\n  }\n]');
    const { message } = await failure(file);
    expect(message.startsWith(`${file}:`)).toBe(true);
    expect(message.slice(file.length)).toBe(":5:15: samples[1]: invalid JSON: unexpected token 'o'");
    expect(message).not.toContain('\n');
  });

  test('where V8 names no offset, the place it quotes is found in the element: NaN on line 6, a bare word on line 4', async () => {
    const nan = temp(
      '[\n  {\n    "question_id": "q1",\n    "question": "How many?",\n    "x": 1,\n    "answer": NaN,\n    "y": 2\n  }\n]',
    );
    expect((await failure(nan)).message).toBe(`${nan}:6:15: samples[0]: invalid JSON: unexpected token 'N'`);
    const word = temp('[\n  {"a": 1},\n  {\n    "question_type": knowledge-update\n  }\n]');
    expect((await failure(word)).message).toBe(`${word}:4:22: samples[1]: invalid JSON: unexpected token 'k'`);
    // A short element is quoted whole: no place to find, so the element's start.
    const short = temp('[\n  [1,2,]\n]');
    expect((await failure(short)).message).toBe(`${short}:2:3: samples[0]: invalid JSON: unexpected token ']'`);
  });

  test('columns and lines are counted through long strings, escapes and chunk borders', async () => {
    // The scanner jumps over string content: the column of what follows a long string is still exact.
    const long = `${'x'.repeat(3000)}\\"\\\\${'y'.repeat(1 << 20)}`;
    const file = temp(`[\n  {"a": "${long}", "b": "\\n"}, {"c": 1},\n  {"d": "${long}"}, oops\n]`);
    const { message } = await failure(file);
    expect(message).toBe(`${file}:3:${long.length + 14}: samples[3]: invalid JSON: unexpected token 'o'`);
  });

  test('stopping early reads nothing further (a broken tail does not matter)', async () => {
    const file = temp('[{"first": 1}, {"second": oops');
    const seen: unknown[] = [];
    for await (const value of readJsonList(file, 'samples')) {
      seen.push(value);
      break;
    }
    expect(seen).toEqual([{ first: 1 }]);
  });
});

describe('importDataset (run --dataset)', () => {
  test('locomo:FILE gives validated scenarios with kinds, and the report', async () => {
    const { scenarios, report } = await importDataset('locomo:fixtures/datasets/locomo10-sample.json', { limit: 1 });
    expect(scenarios).toHaveLength(1);
    expect(scenarios[0]!.steps[0]).toEqual({ kind: 'session', session: 'new', at: '2023-05-08T13:56:00Z' });
    expect(scenarios[0]!.steps.filter((step) => step.kind === 'probe')).toHaveLength(19);
    expect(report).toMatchObject({ dataset: 'locomo', units: 1, scenarios: 1, items: 22 });
  });

  test('bad --dataset arguments and files with nothing to import are errors with exit code 2', async () => {
    for (const arg of ['locomo', 'squad:x.json', 'longmemeval:']) {
      expect(() => parseDatasetArg(arg)).toThrow(/expected DATASET:FILE with DATASET one of locomo, longmemeval/u);
    }
    const nothing = temp('[{"qa": [{"question": "q?", "answer": "a", "category": 4}], "sample_id": "x"}]');
    const error = await importDataset(`locomo:${nothing}`).then(
      () => undefined,
      (caught: unknown) => caught as MembenchError,
    );
    expect(error?.message).toBe(`${nothing}: nothing to import: its only conversation could not be imported`);
    expect(error?.details).toEqual([
      'skipped (1):',
      '  conversation-missing (1):',
      '    x qa[0]: the sample has no conversation object',
    ]);
    await expect(importDataset(`locomo:${temp('[]')}`)).rejects.toThrow(
      /nothing to import: the list holds no conversations/u,
    );
    await expect(importDataset('locomo:fixtures/datasets/locomo10-sample.json', { limit: 0 })).rejects.toThrow(
      '--limit 0: expected a whole number >= 1',
    );
  });
});

test('formatImportReport groups issues by kind with at most three examples each', () => {
  const log = new ImportLog('locomo', 'locomo10.json');
  log.unit();
  log.scenario({
    name: 'c',
    steps: [
      { session: 'new' },
      { user: 'A: hi', assistant: 'B: hello' },
      { user: 'A: bye', reply: false },
      { probe: 'q?', label: 'single-hop' },
      { probe: 'r?', label: 'single-hop' },
      { probe: 's?', category: 'temporal' },
    ],
  });
  for (let index = 0; index < 5; index++) {
    log.item(`c qa[${index}]`);
    log.repair(`c qa[${index}]`, 'answer-number', `answer ${index} is a number`, `c qa[${index}]`);
  }
  log.item('c qa[5]');
  log.skip('c qa[5]', 'question-missing', 'no question', 'c qa[5]');
  log.item('c qa[6]');
  expect(formatImportReport(log.report()).split('\n')).toEqual([
    'locomo: 1 conversation read from locomo10.json, 1 scenario imported',
    'QA items: 7 read: 1 imported as is, 5 repaired, 1 skipped',
    "1 session, 3 turns (both speakers' messages, none written by a model); probes by category: single-hop 2, temporal 1",
    'repaired (5):',
    '  answer-number (5):',
    '    c qa[0]: answer 0 is a number',
    '    c qa[1]: answer 1 is a number',
    '    c qa[2]: answer 2 is a number',
    '    ... and 2 more',
    'skipped (1):',
    '  question-missing (1):',
    '    c qa[5]: no question',
  ]);
});

describe('yamlBytes (the size check of an imported scenario)', () => {
  const documentOf = (text: string): ScenarioDocument =>
    ({ name: 'size', steps: [{ user: text, assistant: 'ok' }] }) as unknown as ScenarioDocument;

  test('a document far under the limit is not written as YAML, and its bound is not under its JSON bytes', () => {
    let written = 0;
    const document = documentOf('plain words and 中文 '.repeat(2000));
    const bytes = yamlBytes(JSON.stringify(document), () => (written++, ''));
    expect(written).toBe(0);
    expect(bytes).toBeGreaterThanOrEqual(Buffer.byteLength(JSON.stringify(document)));
  });

  test("ASCII text whose 3-bytes-a-unit bound is over half the limit but whose bytes are under it: its JSON's bytes, no YAML", () => {
    // A question of LongMemEval_M's size: ~6 MB of JSON, its bound 18 MB.
    const document = documentOf('plain words '.repeat(500_000));
    const json = JSON.stringify(document);
    let written = 0;
    expect(json.length * 3 * 2).toBeGreaterThan(MAX_SCENARIO_BYTES);
    expect(yamlBytes(json, () => (written++, ''))).toBe(Buffer.byteLength(json));
    expect(written).toBe(0);
  });

  test('text of 3-byte characters whose UTF-16 length is under half the limit but whose bytes are over it is measured as YAML', () => {
    // Under half the limit in UTF-16 units, over the whole limit in UTF-8 bytes (3 per Han character).
    const document = documentOf('中'.repeat(MAX_SCENARIO_BYTES / 2 - 1000));
    let written = 0;
    const yaml = 'x'.repeat(MAX_SCENARIO_BYTES + 1);
    expect(yamlBytes(JSON.stringify(document), () => (written++, yaml))).toBe(MAX_SCENARIO_BYTES + 1);
    expect(written).toBe(1);
  });
});
