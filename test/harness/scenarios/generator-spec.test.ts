/**
 * Generator specs are validated like scenario files: every problem located as
 * `file:line:col: path: message`, unknown knobs refused, cross-field limits (room for the
 * distances, the bank's capacity, a day per dated fact) checked, defaults filled in.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { isMembenchError } from '../../../harness/core/errors.js';
import {
  checkSpecText,
  DEFAULT_DISTANCES,
  factDistances,
  loadSpecFile,
} from '../../../harness/scenarios/generator-spec.js';
import { formatProblem } from '../../../harness/scenarios/load.js';
import { tempDir } from '../../helpers/temp-dir.js';

const lines = (text: string, file = 'spec.yaml'): string[] => checkSpecText(text, file).problems.map(formatProblem);

describe('checkSpecText', () => {
  test('a bare spec gets every default, and the built-in suite file spells out exactly those defaults', async () => {
    const { spec, problems } = checkSpecText('seed: 7\n', 'dir/My Suite.yaml');
    expect(problems).toEqual([]);
    expect(spec).toMatchObject({
      name: 'my-suite',
      seed: 7,
      languages: ['en', 'zh'],
      exchanges: 280,
      distances: DEFAULT_DISTANCES,
      rememberShare: 0.5,
    });
    expect(spec!.updates.chain).toEqual({ min: 1, max: 3 });
    expect(spec!.sessions).toEqual({ every: 24, start: '2025-03-03', daysApart: { min: 1, max: 3 } });
    const builtin = await loadSpecFile('scenarios/suites/generated.yaml');
    const { name: _name, description: _description, group: _group, seed: _seed, ...knobs } = builtin;
    const { name: _n, seed: _s, ...defaults } = spec!;
    expect(knobs).toEqual(defaults);
  });

  test('spread, each fact is asked once per doubling and the facts share out its distances; a list of powers of two gives every fact all of them', () => {
    expect(DEFAULT_DISTANCES.slice(0, 32)).toEqual(Array.from({ length: 32 }, (_, index) => index + 1));
    expect(DEFAULT_DISTANCES.slice(32)).toEqual([38, 45, 54, 64, 76, 91, 108, 128, 152, 181, 215, 256]);
    const spread = { distances: DEFAULT_DISTANCES, spread: true };
    expect(factDistances(spread, 0)).toHaveLength(9);
    // Sixteen facts in turn cover every distance of the list.
    expect(new Set(Array.from({ length: 16 }, (_, index) => factDistances(spread, index)).flat())).toEqual(
      new Set(DEFAULT_DISTANCES),
    );
    const powers = [1, 2, 4, 8, 16, 32, 64, 128, 256];
    expect(factDistances({ distances: powers, spread: true }, 5)).toEqual(powers);
    expect(factDistances({ distances: DEFAULT_DISTANCES, spread: false }, 5)).toEqual(DEFAULT_DISTANCES);
  });

  test('a name leaves room for -en and -zh within a scenario name: 93 characters, not 94', () => {
    expect(lines(`name: ${'a'.repeat(93)}\n`)).toEqual([]);
    expect(lines(`name: ${'a'.repeat(94)}\n`)).toEqual([
      'spec.yaml:1:7: name: use at most 93 characters (its scenarios are NAME-en and NAME-zh, whose names become file names), got 94',
    ]);
  });

  test('distances are sorted, a distance listed twice is refused; a single number is a range of one', () => {
    const { spec } = checkSpecText('distances: [8, 1, 2]\nupdates:\n  chain: 2\n', 'a.yaml');
    expect(spec!.distances).toEqual([1, 2, 8]);
    expect(lines('distances: [8, 1, 8, 2]\n')).toEqual(['spec.yaml:1:12: distances: a distance is listed twice']);
    expect(spec!.updates.chain).toEqual({ min: 2, max: 2 });
    // The parsed form reads back as itself (a spec object handed to generateWorkload), and nothing more.
    expect(
      checkSpecText('distances: [1, 2]\nupdates:\n  chain: {min: 1, max: 3}\n', 'a.yaml').spec!.updates.chain,
    ).toEqual({ min: 1, max: 3 });
    expect(lines('distances: [1, 2]\nupdates:\n  chain: {min: 1, max: 3, foo: 9}\n')).toEqual([
      'spec.yaml:3:10: updates.chain: expected a number or [smallest, largest] corrections, got a mapping',
    ]);
  });

  test('bad knobs are located at their value, unknown keys at the key, all at once', () => {
    const text = [
      'name: Bad Name',
      'seed: 1.5',
      'languages: [en, fr]',
      'facts:',
      '  fact: -1',
      '  bogus: 3',
      'updates:',
      '  chain: [3, 1]',
      '  revertShare: 2',
      'sessions:',
      '  start: 2025-13-01',
      'colour: blue',
      '',
    ].join('\n');
    expect(lines(text)).toEqual([
      'spec.yaml:1:7: name: use ASCII lower-case letters a-z, digits 0-9, ".", "_" and "-" (a name becomes file names: other text, Chinese included, goes in description)',
      'spec.yaml:2:7: seed: expected a whole number from 0 to 4294967295, got 1.5',
      'spec.yaml:3:17: languages[1]: expected one of en, zh, got "fr"',
      'spec.yaml:5:9: facts.fact: expected 0 or more, got -1',
      'spec.yaml:6:3: facts.bogus: unknown key "bogus" (known: fact, distractor, update, multi-hop, temporal, abstention)',
      'spec.yaml:8:10: updates.chain: expected [smallest, largest]: the first is larger',
      'spec.yaml:9:16: updates.revertShare: expected a share from 0 to 1, got 2',
      'spec.yaml:11:10: sessions.start: not a date',
      'spec.yaml:12:1: colour: unknown key "colour" (known: name, description, group, seed, languages, exchanges, distances, spread, facts, updates, rememberShare, filler, sessions)',
    ]);
  });

  test('what the knobs cannot say alone: room for the distances and statements, the bank, a day per dated fact, chains for reverts', () => {
    expect(lines('exchanges: 100\n')).toEqual([
      'spec.yaml:1:12: exchanges: 100 exchanges are fewer than the largest default distance, 256: raise exchanges or set distances',
    ]);
    expect(
      lines(
        'exchanges: 40\ndistances: [1, 64]\nfacts: { fact: 2, distractor: 0, update: 0, multi-hop: 0, temporal: 0, abstention: 0 }\n',
      ),
    ).toEqual([
      'spec.yaml:2:16: distances[1]: distance 64 does not fit in a conversation of 40 exchanges (raise exchanges)',
    ]);
    expect(
      lines(
        'exchanges: 300\nfacts:\n  fact: 40\n  temporal: 20\nsessions:\n  every: 100\nupdates:\n  chain: 1\n  revertShare: 0.5\nlanguages: [zh]\n',
      ),
    ).toEqual([
      'spec.yaml:3:3: facts: the zh fact bank holds 45 (topic, owner) pairs; fact + 2 × distractor + update asks for 58',
      'spec.yaml:4:13: facts.temporal: each dated activity needs a day of its own: 300 exchanges in sessions of 100 make 3 days',
      'spec.yaml:4:13: facts.temporal: the zh bank holds 10 dated activities',
      'spec.yaml:9:16: updates.revertShare: a revert needs a chain of at least 2 corrections (raise the longest in updates.chain)',
    ]);
    expect(lines('facts: { fact: 0, distractor: 0, update: 0, multi-hop: 0, temporal: 0, abstention: 0 }\n')).toEqual([
      'spec.yaml:1:8: facts: nothing to probe: every count is 0',
    ]);
    expect(
      lines(
        'exchanges: 300\nfacts: { fact: 200, distractor: 0, update: 0, multi-hop: 0, temporal: 0, abstention: 0 }\nlanguages: []\n',
      ),
    ).toEqual(['spec.yaml:3:12: languages: expected at least one language']);
  });

  test('the document itself: empty, not a mapping, invalid YAML', () => {
    expect(lines('')).toEqual([
      'spec.yaml:1:1: (document): file is empty: expected a generator spec with `name` and the knobs of a generated workload',
    ]);
    expect(lines('- a\n- b\n')).toEqual([
      'spec.yaml:1:1: (document): expected a mapping with `name` and the knobs of a generated workload, got a list',
    ]);
    expect(lines('seed: [1\n')[0]).toMatch(/^spec\.yaml:\d+:\d+: \(document\): invalid YAML: /u);
  });
});

describe('loadSpecFile', () => {
  test('throws a MembenchError (exit 2) with one located line per problem', async () => {
    const file = path.join(await tempDir('membench-spec-'), 'bad.yaml');
    await writeFile(file, 'exchanges: many\n');
    const error = await loadSpecFile(file).catch((caught: unknown) => caught);
    expect(isMembenchError(error) && error.exitCode).toBe(2);
    expect(isMembenchError(error) && [error.message, ...error.details]).toEqual([
      `${file}: invalid generator spec (1 problem)`,
      `${file}:1:12: exchanges: expected a number of exchanges, got "many"`,
    ]);
    const missing = await loadSpecFile(path.join(path.dirname(file), 'none.yaml')).catch((caught: unknown) => caught);
    expect(isMembenchError(missing) && missing.details[0]).toMatch(
      /none\.yaml:1:1: \(document\): cannot read: no such file$/u,
    );
  });
});
