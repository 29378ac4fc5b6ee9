/**
 * What the scenario loader refuses before anything runs, beyond the broken fixtures
 * (load.test.ts): names that cannot become file names, evidence that evidence recall could never
 * find, empty concurrent sessions, and aliases judged by what they expand to.
 */
import { parseDocument } from 'yaml';
import { describe, expect, test } from 'vitest';
import { evidenceIndex } from '../../../harness/scenarios/evidence.js';
import { scenarioHeader } from '../../../harness/scenarios/format.js';
import { MAX_SCENARIO_NAME_CHARS } from '../../../harness/scenarios/scenario-name.js';
import { toScenarioName } from '../../../harness/scenarios/importers/shared.js';
import {
  checkScenarioText,
  checkScenarioValue,
  documentValue,
  formatProblem,
  MAX_SCENARIO_BYTES,
} from '../../../harness/scenarios/load.js';
import { MAX_ANCHORS_AND_ALIASES } from '../../../harness/scenarios/yaml-nodes.js';

/** The located lines a text gets, and whether it loads. */
function check(text: string, file = 's.yaml'): { ok: boolean; lines: string[] } {
  const { scenario, problems } = checkScenarioText(text, file);
  return { ok: scenario !== undefined, lines: problems.map(formatProblem) };
}

describe('scenario names', () => {
  test(`a name of ${MAX_SCENARIO_NAME_CHARS} characters loads; one more is refused at the name`, () => {
    const longest = 'a'.repeat(MAX_SCENARIO_NAME_CHARS);
    expect(check(`description: d\nname: ${longest}\nsteps:\n  - user: hi\n  - {probe: hi?, expect: [hi]}\n`)).toEqual({
      ok: true,
      lines: [],
    });
    expect(check(`description: d\nname: ${longest}b\nsteps:\n  - user: hi\n`)).toEqual({
      ok: false,
      lines: ['s.yaml:2:7: name: use at most 96 characters (a scenario name becomes file names), got 97'],
    });
  });

  test('a 250-character name is refused, and so are its characters when they break the rule too', () => {
    expect(check(`name: ${'a'.repeat(250)}\nsteps:\n  - user: hi\n`).lines).toEqual([
      's.yaml:1:7: name: use at most 96 characters (a scenario name becomes file names), got 250',
    ]);
    expect(check(`name: ${'A'.repeat(100)}\nsteps:\n  - user: hi\n`).lines).toEqual([
      's.yaml:1:7: name: use ASCII lower-case letters a-z, digits 0-9, ".", "_" and "-" (a name becomes file names: other text, Chinese included, goes in description)',
      's.yaml:1:7: name: use at most 96 characters (a scenario name becomes file names), got 100',
    ]);
  });

  test('a name taken from a long file name says where it came from', () => {
    const file = `dir/${'x'.repeat(120)}.yaml`;
    expect(check('steps:\n  - user: hi\n', file).lines).toEqual([
      `${file}:1:1: name: use at most 96 characters (a scenario name becomes file names), got 120 (the name comes from the file name: give the scenario a \`name\`)`,
    ]);
    expect(check('name: short\nsteps:\n  - user: hi\n', file).ok).toBe(true);
  });

  test("an importer's name for the longest dataset id is a name the format accepts", () => {
    const name = toScenarioName('longmemeval', `${'q'.repeat(300)}_abs`);
    expect(name.length).toBeLessThanOrEqual(MAX_SCENARIO_NAME_CHARS);
    expect(scenarioHeader.safeParse({ name, steps: [{ user: 'hi' }] }).success).toBe(true);
  });
});

describe('evidence cites messages of the conversation', () => {
  /** One step of every kind, each with an id, then a probe citing `cited`. */
  const everyKind = (cited: string): string =>
    [
      'name: e',
      'steps:',
      '  - {id: u, user: My cat is Mochi., assistant: Nice., replyId: r}',
      '  - {id: a, assistant: Shall I note it?}',
      '  - {id: t, tool: note, args: {cat: Mochi}, result: ok}',
      '  - {id: m, remember: The cat is Mochi.}',
      '  - {id: g, forget: the dog}',
      '  - {id: p, probe: Cat?, expect: [Mochi]}',
      '  - {id: s, session: new}',
      '  - {id: c, crash: before_model_call}',
      '  - {id: k, concurrent: [[{id: ku, user: Mochi naps.}], [{id: kp, probe: Nap?, expect: [naps]}]]}',
      '  - {id: f, filler: 2}',
      `  - {id: q, probe: Who is Mochi?, expect: [cat], evidence: [${cited}]}`,
      '',
    ].join('\n');
  const kinds = ['u', 'r', 'a', 't', 'm', 'g', 'p', 's', 'c', 'k', 'ku', 'kp', 'f', 'q'];

  test('exactly the ids evidence recall can find are accepted (evidence.ts evidenceIndex)', () => {
    const { scenario } = checkScenarioText(everyKind('u'), 'e.yaml');
    const index = evidenceIndex(scenario!.steps);
    for (const id of kinds) {
      const holdsMessages = (index.get(id) ?? []).length > 0;
      expect({ id, accepted: check(everyKind(id)).ok }).toEqual({ id, accepted: holdsMessages });
    }
    expect(kinds.filter((id) => check(everyKind(id)).ok)).toEqual(['u', 'r', 'a', 't', 'm', 'g', 'ku']);
  });

  test('each step that puts no message into the conversation is refused at its evidence entry', () => {
    const tail =
      'not a message of the conversation: cite the user, assistant, tool, remember or forget step that holds the answer';
    expect(check(everyKind('u, p, s, c, k, kp, f, q'), 'e.yaml').lines).toEqual([
      `e.yaml:13:64: steps[10].evidence[1]: step "p" is a probe, ${tail}`,
      `e.yaml:13:67: steps[10].evidence[2]: step "s" is a session boundary, ${tail}`,
      `e.yaml:13:70: steps[10].evidence[3]: step "c" is a crash point, ${tail}`,
      `e.yaml:13:73: steps[10].evidence[4]: step "k" is a concurrent block (cite the steps of its sessions), ${tail}`,
      `e.yaml:13:76: steps[10].evidence[5]: step "kp" is a probe, ${tail}`,
      `e.yaml:13:80: steps[10].evidence[6]: step "f" is a filler step (its generated turns have no ids), ${tail}`,
      `e.yaml:13:83: steps[10].evidence[7]: step "q" is this probe itself, ${tail}`,
    ]);
  });

  test('an unknown id and a later step keep their own messages, located the same way', () => {
    const text =
      'name: e\nsteps:\n  - {id: p0, probe: q?, expect: [a]}\n  - probe: Cat?\n    expect: [Mochi]\n    evidence: [nope, later, p0]\n  - {id: later, user: Mochi}\n';
    expect(check(text, 'e.yaml').lines).toEqual([
      'e.yaml:6:16: steps[1].evidence[0]: no step has id "nope"',
      'e.yaml:6:22: steps[1].evidence[1]: step "later" comes after this probe: evidence must precede the question',
      'e.yaml:6:29: steps[1].evidence[2]: step "p0" is a probe, not a message of the conversation: cite the user, assistant, tool, remember or forget step that holds the answer',
    ]);
  });

  test('a derived corpus may cite ids it does not replay, and ids its documents cite, but not one of its probes', () => {
    const steps = [
      { id: 'obs1', user: 'Caroline went to a support group.', cites: ['D1:3', 'p0'] },
      { id: 'p0', probe: 'Where did she go?', expect: ['support group'] },
      { probe: 'What did she do?', expect: ['support group'], evidence: ['D1:3', 'D9:9', 'p0', 'obs1'] },
      { id: 'p2', probe: 'And then?', expect: ['support group'], evidence: ['p2'] },
    ];
    const { problems } = checkScenarioValue({ name: 'd', documents: 'observation', steps }, 'd.yaml');
    expect(problems.map(formatProblem)).toEqual([
      'd.yaml:1:1: steps[3].evidence[0]: step "p2" is this probe itself, not a message of the conversation: cite the user, assistant, tool, remember or forget step that holds the answer',
    ]);
  });
});

describe('concurrent sessions', () => {
  test('an empty session is refused at the session', () => {
    expect(check('name: c\nsteps:\n  - user: hi\n  - concurrent:\n      - []\n      - []\n').lines).toEqual([
      's.yaml:5:9: steps[1].concurrent[0]: expected at least one step: an empty session runs nothing',
      's.yaml:6:9: steps[1].concurrent[1]: expected at least one step: an empty session runs nothing',
    ]);
    expect(check('name: c\nsteps:\n  - concurrent: [[{user: a}], []]\n  - user: hi\n').lines).toEqual([
      's.yaml:3:31: steps[0].concurrent[1]: expected at least one step: an empty session runs nothing',
    ]);
  });

  test('an empty list of sessions is refused, and sessions of one step each load', () => {
    expect(check('name: c\nsteps:\n  - concurrent: []\n').lines).toEqual([
      's.yaml:3:17: steps[0].concurrent: expected at least two sessions',
    ]);
    expect(check('name: c\nsteps:\n  - concurrent: [[{user: a}], [{user: b}]]\n').ok).toBe(true);
  });
});

describe('YAML aliases are judged by what they expand to', () => {
  const reused = (copies: number): string =>
    `name: x\nsteps:\n  - &u {user: hi, assistant: yo}\n${'  - *u\n'.repeat(copies)}`;

  test('a step reused 150 and 500 times loads, every copy the same step', () => {
    for (const copies of [150, 500]) {
      const { scenario, problems } = checkScenarioText(reused(copies), 'x.yaml');
      expect(problems.filter((problem) => problem.severity === 'error')).toEqual([]);
      expect(scenario?.steps).toHaveLength(copies + 1);
      expect(new Set(scenario?.steps.map((step) => JSON.stringify(step)))).toEqual(
        new Set([JSON.stringify({ user: 'hi', assistant: 'yo', kind: 'user' })]),
      );
    }
  });

  // Nine copies of each level: level h would be ~140 million characters written out.
  const bomb = [
    'name: x',
    'a: &a [x, x, x, x, x, x, x, x, x]',
    ...'bcdefgh'
      .split('')
      .map((name, index) => `${name}: &${name} [${Array(9).fill(`*${'abcdefgh'[index]}`).join(', ')}]`),
    'steps:',
    '  - user: hi',
    '',
  ].join('\n');

  test('a billion-laughs file is refused at the alias that takes it past 16 MiB', () => {
    // Levels a to f come to ~1.9 M characters, each *f adds ~1.7 M: the ninth *f (line 8, column
    // 8 + 8 × 4) crosses the limit.
    expect(check(bomb, 'bomb.yaml').lines).toEqual([
      `bomb.yaml:8:40: (document): invalid YAML: alias *f expands the document past ${MAX_SCENARIO_BYTES} characters, the size limit of a file (a YAML alias bomb?)`,
    ]);
    // The config loader shares the rule (it places its problems itself).
    expect(documentValue(parseDocument(bomb), 'c.yaml')).toMatchObject({
      problem: expect.stringContaining('alias *f expands the document past'),
    });
  });

  test('the same levels of nine copies load while they stay under the limit', () => {
    const smaller = bomb
      .split('\n')
      .filter((line) => !/^[gh]:/u.test(line))
      .join('\n');
    const { ok, lines } = check(smaller);
    expect(ok).toBe(true);
    expect(lines.filter((line) => !line.includes(': warning: '))).toEqual([]);
  });

  test(`more than ${MAX_ANCHORS_AND_ALIASES} anchors and aliases are refused at the one past the limit`, () => {
    expect(check(reused(MAX_ANCHORS_AND_ALIASES - 1)).ok).toBe(true);
    expect(check(reused(MAX_ANCHORS_AND_ALIASES)).lines).toEqual([
      `s.yaml:${MAX_ANCHORS_AND_ALIASES + 3}:5: (document): invalid YAML: more than ${MAX_ANCHORS_AND_ALIASES} anchors and aliases (each alias is looked up among all of them): write some values out`,
    ]);
  });

  test('an alias inside the value it names, and one with no anchor, are refused at the alias', () => {
    expect(check('name: x\nsteps:\n  - &s {user: hi, assistant: *s}\n').lines).toEqual([
      's.yaml:3:30: (document): invalid YAML: alias *s is inside the value it names (&s): it would repeat without end',
    ]);
    expect(check('name: x\nsteps:\n  - user: hi\n  - *u\n  - &u {user: hi}\n').lines).toEqual([
      's.yaml:4:5: (document): invalid YAML: alias *u names no anchor: set &u on a value before it',
    ]);
  });
});

describe('YAML tags', () => {
  test('a tag beyond the core types is refused at the tagged value, where it was read as a string or misdescribed', () => {
    for (const tag of ['!!js/function', '!foo', '!!binary'])
      expect(check(`name: x\nsteps:\n  - user: ${tag} aGVsbG8=\n    assistant: ok\n`).lines).toEqual([
        // Located at the tagged value, after its tag.
        `s.yaml:3:${11 + tag.length + 1}: (document): invalid YAML: the tag ${tag} is not read here (YAML's core types only: strings, numbers, booleans, null, lists, mappings): write the value without it`,
      ]);
  });

  test('!!timestamp is refused as a tag whether or not its value is a date (the yaml package rejected a bad one in its own words)', () => {
    const refusal = (col: number): string =>
      `s.yaml:4:${col}: (document): invalid YAML: the tag !!timestamp is not read here (YAML's core types only: strings, numbers, booleans, null, lists, mappings): write the value without it`;
    expect(check('name: x\nsteps:\n  - user: hi\n    assistant: !!timestamp 2024-01-01\n').lines).toEqual([
      refusal(28),
    ]);
    expect(check('name: x\nsteps:\n  - user: hi\n    assistant: !!timestamp notadate\n').lines).toEqual([refusal(16)]);
  });

  test('the core tags read as they say', () => {
    expect(check('name: x\nsteps:\n  - user: !!str 42\n    assistant: ok\n').ok).toBe(true);
  });
});

describe('what a valid scenario holds by mistake', () => {
  test('a text of only white space is refused wherever a step needs one, naming the field', () => {
    const refused = (step: string): string[] =>
      check(`name: w\nsteps:\n  - user: hi\n  - ${step}\n  - {probe: hi?, expect: [hi]}\n`).lines;
    const blank = '" \\t\u3000"';
    for (const [step, field, what] of [
      [`{user: ${blank}}`, 'user', 'the user message'],
      [`{user: hi, assistant: ${blank}}`, 'assistant', 'the scripted reply'],
      [`{assistant: ${blank}}`, 'assistant', 'the assistant message'],
      [`{tool: ${blank}}`, 'tool', 'a tool name'],
      [`{remember: ${blank}}`, 'remember', 'what to remember'],
      [`{forget: ${blank}}`, 'forget', 'the memory name or text to forget'],
      [`{probe: ${blank}, expect: [hi]}`, 'probe', 'the probe question'],
      [`{probe: hi?, expect: [hi], ask: ${blank}}`, 'ask', 'the question as the model is asked it'],
      [`{probe: hi?, expect: [hi], label: ${blank}}`, 'label', 'a category label'],
    ])
      expect(refused(step!), step).toEqual([
        expect.stringMatching(
          new RegExp(`^s\\.yaml:4:\\d+: steps\\[1\\]\\.${field}: expected ${what}, got only white space$`, 'u'),
        ),
      ]);
    expect(check(`name: w\ngroup: "  "\nsteps:\n  - user: hi\n`).lines).toEqual([
      's.yaml:2:8: group: expected a group name, got only white space',
    ]);
  });

  test('a scenario with no probe warns, unless a crash or concurrent sessions measure its durability', () => {
    const noProbe = check('name: n\nsteps:\n  - user: hi\n');
    expect(noProbe.ok).toBe(true);
    expect(noProbe.lines).toEqual([
      's.yaml:3:3: steps: warning: no probe: nothing asks what the memory kept, so the scenario scores no recall (only tokens and latency are measured): add a probe step',
    ]);
    expect(check('name: n\nsteps:\n  - crash: after_ack\n  - remember: I live in Lisbon.\n').lines).toEqual([]);
    expect(check('name: n\nsteps:\n  - concurrent: [[{remember: a b}], [{remember: c d}]]\n').lines).toEqual([]);
    // A probe inside a concurrent session counts.
    expect(
      check('name: n\nsteps:\n  - concurrent: [[{user: hi}], [{user: yo}, {probe: hi?, expect: [hi]}]]\n').lines,
    ).toEqual([]);
  });

  test('dates that run backwards warn at the later step; equal and rising dates, and undated steps between, do not', () => {
    const dated = (dates: string[]): string[] =>
      check(
        `name: d\nsteps:\n${dates.map((at) => (at === '' ? '  - user: x\n' : `  - {session: new, at: "${at}"}\n  - {user: x, at: "${at}"}\n`)).join('')}  - {probe: x?, expect: [x]}\n`,
      ).lines;
    expect(dated(['2024-05-01', '', '2024-05-01T00:00:00Z', '2024-06-01T10:00:00+02:00'])).toEqual([]);
    expect(dated(['2024-05-02', '', '2024-05-01', '2024-05-03'])).toEqual([
      's.yaml:6:24: steps[3].at: warning: 2024-05-01 is before steps[1].at (2024-05-02): the dates run backwards (the steps are replayed in their order, as written)',
    ]);
  });
});
