/**
 * The loader's located messages, pinned against committed fixtures: each file in
 * fixtures/scenarios/broken has exactly one problem and an exact expected line
 * (`file:line:col: path: message`). Paths are relative: vitest runs from the repo root.
 */
import { mkdtempSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { afterAll, describe, expect, test } from 'vitest';
import {
  checkScenarioFile,
  checkScenarioText,
  checkScenarioValue,
  formatProblem,
  MAX_SCENARIO_BYTES,
  type CheckOptions,
} from '../../../harness/scenarios/load.js';
import { heapAfterGc } from '../../helpers/heap.js';

const BROKEN = 'fixtures/scenarios/broken';
const VALID = 'fixtures/scenarios/valid';
const KINDS = 'user, assistant, tool, remember, forget, probe, session, crash, concurrent, filler';

async function check(file: string, options?: CheckOptions): Promise<{ ok: boolean; lines: string[] }> {
  const { scenario, problems } = await checkScenarioFile(file, options);
  return { ok: scenario !== undefined, lines: problems.map(formatProblem) };
}

/** Fixture name → the exact lines the loader prints for it (file prefix added below). */
const BROKEN_CASES: Record<string, { lines: string[]; options?: CheckOptions }> = {
  // Size, encoding and emptiness: refused before parsing, always at 1:1 except the NUL byte.
  'empty.yaml': { lines: ['1:1: (document): file is empty: expected a scenario with `name` and `steps`'] },
  'whitespace-only.yaml': { lines: ['1:1: (document): file is empty: expected a scenario with `name` and `steps`'] },
  'binary-garbage.yaml': { lines: ['1:7: (document): binary data (a NUL byte): a scenario is YAML or JSON text'] },
  'invalid-utf8.yaml': { lines: ['1:1: (document): not UTF-8 text (binary data?): a scenario is YAML or JSON text'] },
  'oversize.yaml': {
    lines: ['1:1: (document): file is 4618 bytes, over the 1024-byte limit for a scenario'],
    options: { maxBytes: 1024 },
  },

  // YAML / JSON syntax.
  'bad-yaml-indent.yaml': {
    lines: ['5:4: (document): invalid YAML: All sequence items must start at the same column'],
  },
  'bad-yaml-tab-indent.yaml': { lines: ['3:1: (document): invalid YAML: Tabs are not allowed as indentation'] },
  'bad-yaml-duplicate-key.yaml': {
    lines: [
      '6:5: (document): invalid YAML: the key "expect" is given twice in one mapping (first on line 5): keep one',
    ],
  },
  'broken.json': { lines: ["5:5: (document): invalid JSON: Expected ',' or ']' after array element"] },
  // JSON is YAML, but a .json file is held to JSON: the YAML parser took the trailing comma.
  'trailing-comma.json': { lines: ["6:3: (document): invalid JSON: Unexpected token ']'"] },
  // The yaml package keeps it as a key; the checks after it made it the step's prototype (its category read through it).
  'proto-key.yaml': {
    lines: [
      '6:5: (document): invalid YAML: a key "__proto__" is not read here (no membench file has one; JavaScript would take it for the prototype and drop it): rename it',
    ],
  },
  // The same in a .json file, which the same parser reads: its problem is called JSON's, not YAML's.
  'proto-key.json': {
    lines: [
      '5:58: (document): invalid JSON: a key "__proto__" is not read here (no membench file has one; JavaScript would take it for the prototype and drop it): rename it',
    ],
  },
  // The yaml package made it the text "[ category ]" and warned on stderr (Keys with collection values will be stringified).
  'collection-key.yaml': {
    lines: [
      '6:7: (document): invalid YAML: a key that is a list or a mapping is not read here (every key membench reads is a plain name): write a plain key',
    ],
  },
  'deeply-nested.yaml': { lines: ['3:5: steps[0]: nested more than 64 levels deep: not a scenario'] },

  // Document shape and header.
  'top-level-list.yaml': { lines: ['1:1: (document): expected a mapping with `name` and `steps`, got a list'] },
  'bad-name.yaml': {
    lines: [
      '1:7: name: use ASCII lower-case letters a-z, digits 0-9, ".", "_" and "-" (a name becomes file names: other text, Chinese included, goes in description)',
    ],
  },
  'missing-steps.yaml': { lines: ['1:1: steps: required: expected a list of steps'] },
  'steps-not-list.yaml': { lines: ['3:3: steps: expected a list of steps, got a mapping'] },
  'empty-steps.yaml': { lines: ['2:8: steps: expected at least one step'] },

  // Steps.
  'step-is-scalar.yaml': {
    lines: [`4:5: steps[1]: expected a step (a mapping with one of ${KINDS}), got "just some text"`],
  },
  'unknown-step-kind.yaml': { lines: [`4:5: steps[1]: unknown step kind "say": a step needs one of ${KINDS}`] },
  'two-kinds-in-step.yaml': { lines: ['3:5: steps[0]: a step has exactly one kind, found user and probe'] },
  'wrong-type-user.yaml': { lines: ['3:11: steps[0].user: expected the user message, got 42'] },
  'blank-text.yaml': { lines: ['3:11: steps[0].user: expected the user message, got only white space'] },
  'expect-not-list.yaml': { lines: ['5:13: steps[1].expect: expected a list of strings, got "a string"'] },
  'expect-item-not-string.yaml': { lines: ['7:9: steps[1].expect[1]: expected string, got 7'] },
  'probe-without-expect.yaml': {
    lines: [
      '4:5: steps[1].expect: required: a probe needs `expect` (any of these strings counts) unless its category is abstention',
    ],
  },
  'bad-category.yaml': {
    lines: [
      '6:15: steps[1].category: expected one of extraction, multi-hop, temporal, update, abstention; got "recall"',
    ],
  },
  'bad-crash-point.yaml': {
    lines: [
      '4:12: steps[1].crash: expected one of before_model_call, after_tool_intent, after_tool_effect, after_tool_result, mid_memory_write, mid_summary, after_ack; got "during_tool"',
    ],
  },
  'session-not-new.yaml': { lines: ['4:14: steps[1].session: expected "new", got "old"'] },
  'filler-not-integer.yaml': { lines: ['4:13: steps[1].filler: expected a whole number, got 2.5'] },
  // The name rule file-index writes files by (harness/scenarios/memory-name.ts): validate refuses what run would.
  'remember-name-escapes.yaml': {
    lines: ['5:11: steps[1].name: memory name "../../etc" refused: ".." would escape the memory directory'],
  },

  // Cross-step checks.
  'duplicate-ids.yaml': { lines: ['5:9: steps[1].id: duplicate id "home" (first used at steps[0])'] },
  'evidence-missing-id.yaml': { lines: ['7:22: steps[1].evidence[1]: no step has id "move"'] },
  'crash-last.yaml': {
    lines: [
      '4:12: steps[1].crash: a crash with no step after it has nothing left to crash into: put it before the step it should interrupt',
    ],
  },
  'crash-twice.yaml': {
    lines: [
      '3:12: steps[0].crash: two crash steps in a row: this one would be replaced by steps[1] before it fired; keep one',
    ],
  },

  // Concurrent sessions run at once: no crash and no nested concurrency inside one.
  'crash-in-concurrent.yaml': {
    lines: [
      '5:11: steps[0].concurrent[0][1]: a crash cannot run inside a concurrent session (the sessions run at once): put it before or after the concurrent step',
    ],
  },
  'concurrent-in-concurrent.yaml': {
    lines: [
      '5:11: steps[0].concurrent[1][0]: concurrent steps do not nest: list every session as one list of the outer concurrent step',
    ],
  },
};

describe('broken scenario fixtures', () => {
  test('every fixture in fixtures/scenarios/broken has an expected message here', () => {
    expect(readdirSync(BROKEN).sort()).toEqual(Object.keys(BROKEN_CASES).sort());
  });

  test.each(Object.entries(BROKEN_CASES))('%s', async (name, { lines, options }) => {
    const file = `${BROKEN}/${name}`;
    const result = await check(file, options);
    expect(result.lines).toEqual(lines.map((line) => `${file}:${line}`));
    expect(result.ok).toBe(false);
  });
});

describe('valid scenario fixtures', () => {
  test('minimal.yaml loads with no problems', async () => {
    const { scenario, problems } = await checkScenarioFile(`${VALID}/minimal.yaml`);
    expect(problems).toEqual([]);
    expect(scenario).toEqual({
      name: 'minimal',
      source: `${VALID}/minimal.yaml`,
      steps: [
        { kind: 'user', user: 'I live in Lisbon.' },
        {
          kind: 'probe',
          probe: 'Where do I live?',
          expect: ['Lisbon'],
          forbid: [],
          category: 'extraction',
          evidence: [],
        },
      ],
    });
  });

  test('every-step-kind.yaml loads with no problems and keeps nested concurrent steps', async () => {
    const { scenario, problems } = await checkScenarioFile(`${VALID}/every-step-kind.yaml`);
    expect(problems.map(formatProblem)).toEqual([]);
    expect(scenario?.steps.map((step) => step.kind)).toEqual([
      'user',
      'tool',
      'remember',
      'forget',
      'session',
      'crash',
      'concurrent',
      'filler',
      'probe',
      'probe',
    ]);
    const concurrent = scenario?.steps[6];
    expect(concurrent?.kind).toBe('concurrent');
    if (concurrent?.kind !== 'concurrent') return;
    expect(concurrent.concurrent.map((session) => session.map((step) => step.kind))).toEqual([
      ['user', 'probe'],
      ['user'],
    ]);
    expect(scenario?.steps[1]).toMatchObject({
      kind: 'tool',
      tool: 'weather',
      args: { city: 'Lisbon', units: 'metric' },
      effect: false,
    });
    expect(scenario?.steps[7]).toMatchObject({ kind: 'filler', filler: 20, seed: 7, language: 'mixed' });
    expect(scenario?.steps[9]).toMatchObject({ kind: 'probe', category: 'abstention', forbid: [], evidence: [] });
  });

  test('unknown-key-warns.yaml loads with exactly one located warning', async () => {
    const file = `${VALID}/unknown-key-warns.yaml`;
    const { scenario, problems } = await checkScenarioFile(file);
    expect(scenario?.name).toBe('unknown-key-warns');
    expect(problems.map((problem) => problem.severity)).toEqual(['warning']);
    expect(problems.map(formatProblem)).toEqual([`${file}:6:5: steps[1].hint: warning: unknown key "hint" (ignored)`]);
  });

  test('an unknown key a typo away from a known one names it: a misspelt forbid is not scored', async () => {
    const check = checkScenarioText(
      'name: t\nsteps:\n  - user: I live in Porto.\n  - probe: Where do I live?\n    expect: [Porto]\n    forbdi: [Lisbon]\n',
      't.yaml',
    );
    expect(check.problems.map(formatProblem)).toEqual([
      't.yaml:6:5: steps[1].forbdi: warning: unknown key "forbdi" (did you mean forbid?) (ignored)',
    ]);
  });
});

describe('size limit', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'membench-load-scenario-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('a sparse file over 16 MiB is refused before it is read', async () => {
    const file = path.join(dir, 'huge.yaml');
    writeFileSync(file, '');
    truncateSync(file, MAX_SCENARIO_BYTES + 1);
    const result = await check(file);
    expect(result.lines).toEqual([
      `${file}:1:1: (document): file is 16777217 bytes, over the 16777216-byte limit for a scenario`,
    ]);
    expect(result.ok).toBe(false);
  });

  test('a file of exactly the limit is read (and this one is then refused as binary)', async () => {
    const file = path.join(dir, 'at-limit.yaml');
    writeFileSync(file, '');
    truncateSync(file, MAX_SCENARIO_BYTES);
    const result = await check(file);
    expect(result.lines).toEqual([
      `${file}:1:1: (document): binary data (a NUL byte): a scenario is YAML or JSON text`,
    ]);
  });

  test('oversize.yaml is a valid scenario under the default limit', async () => {
    const result = await check(`${BROKEN}/oversize.yaml`);
    expect(result).toEqual({ ok: true, lines: [] });
  });

  test('a missing file is reported, not thrown', async () => {
    const file = path.join(dir, 'nope.yaml');
    expect((await check(file)).lines).toEqual([`${file}:1:1: (document): cannot read: no such file`]);
  });

  test('a directory is reported as not a file', async () => {
    expect((await check(dir)).lines).toEqual([`${dir}:1:1: (document): not a file`]);
  });
});

describe('loader edge cases found in review', () => {
  test('reports evidence that comes after its probe', async () => {
    const check = checkScenarioText(
      'name: e\nsteps:\n  - probe: q?\n    expect: [a]\n    evidence: [later]\n  - id: later\n    user: a\n',
      'e.yaml',
    );
    expect(check.problems.map(formatProblem)).toEqual([
      'e.yaml:5:16: steps[0].evidence[0]: step "later" comes after this probe: evidence must precede the question',
    ]);
  });

  test('refuses an expect or forbid string of white space only, which would match every context', async () => {
    const check = checkScenarioText(
      'name: w\nsteps:\n  - user: hi\n  - probe: q?\n    expect: ["\\u3000", "ok"]\n    forbid: ["\\t \\n"]\n',
      'w.yaml',
    );
    expect(check.problems.map(formatProblem)).toEqual([
      'w.yaml:5:14: steps[1].expect[0]: holds only white space: it would match every text',
      'w.yaml:6:14: steps[1].forbid[0]: holds only white space: it would match every text',
    ]);
  });

  test('refuses an expect or forbid string of punctuation or invisible characters only, found in nearly every context or none', async () => {
    const check = checkScenarioText(
      'name: p\nsteps:\n  - user: I am allergic to peanuts.\n  - probe: q?\n    expect: [peanut, "."]\n    forbid: ["\\u200b", "?!"]\n',
      'p.yaml',
    );
    expect(check.problems.map(formatProblem)).toEqual([
      'p.yaml:5:22: steps[1].expect[1]: "." holds no letter, digit or symbol: recall would find it in nearly every text (punctuation) or in none (an invisible character), whatever the strategy kept',
      'p.yaml:6:14: steps[1].forbid[0]: "\u200b" holds no letter, digit or symbol: recall would find it in nearly every text (punctuation) or in none (an invisible character), whatever the strategy kept',
      'p.yaml:6:24: steps[1].forbid[1]: "?!" holds no letter, digit or symbol: recall would find it in nearly every text (punctuation) or in none (an invisible character), whatever the strategy kept',
    ]);
    // A letter, a digit or a symbol is enough: `6` guests, an emoji, a currency sign.
    expect(
      checkScenarioText(
        'name: p\nsteps:\n  - user: six 🥜 $\n  - probe: q?\n    expect: ["6", "🥜", "$"]\n    forbid: ["5."]\n',
        'p.yaml',
      ).problems,
    ).toEqual([]);
  });

  test('refuses a probe whose expect and forbid hold the same string: recalled and stale at once', async () => {
    const check = checkScenarioText(
      'name: b\nsteps:\n  - user: hi\n  - probe: q?\n    expect: [P-519, Teal]\n    forbid: [P-748, " teal "]\n',
      'b.yaml',
    );
    expect(check.problems.map(formatProblem)).toEqual([
      'b.yaml:6:21: steps[1].forbid[1]: " teal " is also in expect: every answer that recalls it would count as stale',
    ]);
    expect(
      checkScenarioText(
        'name: b\nsteps:\n  - user: hi\n  - probe: q?\n    expect: [P-519]\n    forbid: [P-748]\n',
        'b.yaml',
      ).problems,
    ).toEqual([]);
    const part = checkScenarioText(
      'name: b\nsteps:\n  - user: hi\n  - probe: q?\n    expect: [Shanghai]\n    forbid: [Shang]\n',
      'b.yaml',
    );
    expect(part.problems.map(formatProblem)).toEqual([
      'b.yaml:6:14: steps[1].forbid[0]: "Shang" is part of the expected "Shanghai": every answer that recalls it would count as stale',
    ]);
  });

  test('an at or expires that is no ISO date on the calendar is refused; one without a zone is UTC', async () => {
    const check = checkScenarioText(
      'name: d\nsteps:\n  - {user: hi, at: "peanut 7"}\n  - {session: new, at: 2025-02-30}\n  - {remember: x, expires: "1"}\n',
      'd.yaml',
    );
    expect(check.problems.map((problem) => `${problem.line}:${problem.path}`)).toEqual([
      '3:steps[0].at',
      '4:steps[1].at',
      '5:steps[2].expires',
    ]);
    const zoneless = checkScenarioText('name: d\nsteps:\n  - {user: hi, at: "2025-05-12T09:30"}\n', 'd.yaml');
    expect(zoneless.scenario?.steps[0]).toMatchObject({ at: '2025-05-12T09:30Z' });
  });

  test('refuses numbers the JSON of a tool would change, lone surrogates, a blank group and a filler seed past 32 bits', async () => {
    const numbers = checkScenarioText(
      'name: t\nsteps:\n  - tool: get_balance\n    args: { account: 1e400 }\n  - tool: get_rate\n    result: { rate: .nan, code: 12345678901234567890 }\n',
      't.yaml',
    );
    expect(numbers.problems.map(formatProblem)).toEqual([
      "t.yaml:4:22: steps[0].args.account: Infinity is no finite number: a tool's data travels as JSON, which has none (it became null)",
      "t.yaml:6:21: steps[1].result.rate: NaN is no finite number: a tool's data travels as JSON, which has none (it became null)",
    ]);
    const big = checkScenarioText('name: t\nsteps:\n  - {tool: t, result: [1, 12345678901234567890]}\n', 't.yaml');
    expect(big.problems.map((problem) => `${problem.path}: ${problem.message}`)).toEqual([
      'steps[0].result[1]: an integer past 2^53 is not kept to the digit as a number (it read as 12345678901234567000): quote it',
    ]);
    const surrogate = checkScenarioText(
      '{"name":"t","steps":[{"user":"hi"},{"probe":"Who?","expect":["\\udfff"]}]}',
      't.json',
    );
    expect(surrogate.problems.map((problem) => `${problem.path}: ${problem.message}`)).toEqual([
      'steps[1].expect[0]: holds a lone UTF-16 surrogate (a \\ud800-\\udfff escape without its pair): not text',
    ]);
    expect(
      checkScenarioText('name: t\ngroup: "  "\nsteps:\n  - user: hi\n', 't.yaml').problems.map((p) => p.message),
    ).toEqual(['expected a group name, got only white space']);
    expect(
      checkScenarioText('name: t\nsteps:\n  - {filler: 3, seed: 4294967303}\n', 't.yaml').problems.map((p) => p.path),
    ).toEqual(['steps[0].seed']);
  });

  test('refuses a crash that could never fire in the one step it is armed for', async () => {
    const check = checkScenarioText(
      [
        'name: c',
        'steps:',
        '  - user: hi',
        '  - crash: after_ack',
        '  - user: Book a table.',
        '    assistant: Booked.',
        '  - crash: after_tool_result',
        '  - remember: I like tea.',
        '  - crash: before_model_call',
        '  - session: new',
        '  - probe: What do I like?',
        '    expect: [tea]',
        '',
      ].join('\n'),
      'c.yaml',
    );
    expect(check.problems.map((problem) => `${problem.line}: ${problem.message}`)).toEqual([
      '4: after_ack before steps[2], a user step (only a remember is acknowledged): it would never fire',
      '7: after_tool_result before steps[4], a remember step (only a tool step calls a tool): it would never fire',
      '9: before_model_call before steps[7], a probe (it saves nothing and passes no crash point): it would never fire',
    ]);
  });

  test('refuses a before_model_call crash armed for a step that makes no model call', async () => {
    const check = checkScenarioText(
      [
        'name: m',
        'steps:',
        '  - user: hi',
        '  - crash: before_model_call',
        '  - assistant: Anything else?',
        '  - crash: before_model_call',
        '  - user: My son is allergic to peanuts.',
        '    reply: false',
        '  - crash: before_model_call',
        '  - tool: search',
        '  - crash: before_model_call',
        '  - session: new',
        '  - filler: 2',
        '  - crash: before_model_call',
        '  - user: Still there?',
        '  - probe: What is he allergic to?',
        '    expect: [peanut]',
        '',
      ].join('\n'),
      'm.yaml',
    );
    expect(check.problems.map((problem) => `${problem.line}: ${problem.path}: ${problem.message}`)).toEqual([
      '4: steps[1].crash: before_model_call before steps[2], an assistant step (it saves a scripted message: no model call): it would never fire',
      '6: steps[3].crash: before_model_call before steps[4], a user step with `reply: false` (nobody answers it: no model call): it would never fire',
      '9: steps[5].crash: before_model_call before steps[6], a tool step (it saves a scripted message: no model call): it would never fire',
    ]);
  });

  test('refuses a YAML merge key, which YAML 1.2 does not read: the keys it was to bring were dropped', async () => {
    const check = checkScenarioText(
      'name: m\nsteps:\n  - user: hi\n  - &q {probe: Where?, expect: [x], category: update}\n  - {<<: *q, probe: Again?}\n',
      'm.yaml',
    );
    expect(check.problems.map(formatProblem)).toEqual([
      'm.yaml:5:6: steps[2].<<: a YAML merge key (<<) is not read (YAML 1.2 has none): write the keys out',
      'm.yaml:5:5: steps[2].expect: required: a probe needs `expect` (any of these strings counts) unless its category is abstention',
    ]);
    // A step valid without what it merges (category, forbid) is refused too: it ran with other scoring.
    const quiet = checkScenarioText(
      'name: m\nsteps:\n  - user: hi\n  - &q {probe: Where?, expect: [x], category: update}\n  - {<<: *q, probe: Again?, expect: [x]}\n',
      'm.yaml',
    );
    expect(quiet.problems.map((problem) => [problem.severity, problem.path])).toEqual([['error', 'steps[2].<<']]);
    expect(quiet.scenario).toBeUndefined();
  });

  test('reports a second YAML document in plain words', async () => {
    const check = checkScenarioText('name: a\nsteps:\n  - user: hi\n---\nname: b\n', 'two.yaml');
    expect(check.problems.map(formatProblem)).toEqual([
      'two.yaml:4:1: (document): invalid YAML: the file holds 2 YAML documents (a line with --- starts one): a scenario is one YAML document',
    ]);
    const three = checkScenarioText('name: a\nsteps:\n  - user: hi\n---\nname: b\n---\n', 'three.yaml');
    expect(three.problems.map(formatProblem)).toEqual([
      'three.yaml:4:1: (document): invalid YAML: the file holds 3 YAML documents (a line with --- starts one): a scenario is one YAML document',
    ]);
  });

  test('says a required key is missing beside an unknown key a typo away from it (its warning is not shown for a failing file)', () => {
    const check = checkScenarioText('name: x\nstpes:\n  - user: hi\n', 'typo.yaml');
    expect(check.problems.map(formatProblem)).toEqual([
      'typo.yaml:2:1: steps: required: expected a list of steps (found "stpes": a typo?)',
    ]);
    const far = checkScenarioText('name: x\nturns:\n  - user: hi\n', 'far.yaml');
    expect(far.problems.map(formatProblem)).toEqual([
      expect.stringMatching(/^far\.yaml:1:1: steps: required: expected a list of steps$/u),
    ]);
  });

  test('reads a lone CR (classic Mac line ends) as a line break, as YAML 1.2 does: lines located as in the file', () => {
    const valid = checkScenarioText(
      'name: cr\rsteps:\r  - user: hi\r    assistant: hello\r  - probe: hi?\r    expect: [hello]\r',
      'cr.yaml',
    );
    expect(valid.problems).toEqual([]);
    expect(valid.scenario?.steps).toHaveLength(2);
    const bad = checkScenarioText('name: cr\rsteps:\r  - user: hi\r  - nosuch: x\r', 'bad.yaml');
    expect(bad.problems.filter((problem) => problem.severity === 'error').map((problem) => problem.line)).toEqual([4]);
  });

  test('reports 100,000 levels of nesting once, as nesting', async () => {
    const check = checkScenarioText(
      `name: d\nsteps:\n  - user: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n`,
      'deep.yaml',
    );
    expect(check.problems).toHaveLength(1);
    expect(check.problems[0]!.message).toBe('nested too deeply to parse (more than 64 levels)');
  });

  test('accepts `expect: []` on an abstention probe (and only there), reading it as no answer', () => {
    const ok = checkScenarioText(
      'name: a\nsteps:\n  - user: hi\n  - probe: What brand is my oven?\n    expect: []\n    category: abstention\n',
      'a.yaml',
    );
    expect(ok.problems).toEqual([]);
    expect(ok.scenario?.steps[1]).not.toHaveProperty('expect');
    const bad = checkScenarioText('name: b\nsteps:\n  - user: hi\n  - probe: Which day?\n    expect: []\n', 'b.yaml');
    expect(bad.problems.map(formatProblem)).toEqual([
      'b.yaml:5:13: steps[1].expect: expected at least one string (an empty list is for abstention probes only)',
    ]);
  });

  test('reads `reply: false`, an assistant-only step, a label and a scoring', () => {
    const check = checkScenarioText(
      'name: r\nsteps:\n  - assistant: Hello!\n  - user: "A: hi"\n    reply: false\n  - probe: q?\n    expect: [hi]\n    label: single-hop\n    scoring: locomo-f1\n',
      'r.yaml',
    );
    expect(check.problems).toEqual([]);
    expect(check.scenario?.steps).toMatchObject([
      { kind: 'assistant', assistant: 'Hello!' },
      { kind: 'user', reply: false },
      { kind: 'probe', label: 'single-hop', scoring: 'locomo-f1' },
    ]);
    expect(
      checkScenarioText('name: r\nsteps:\n  - user: hi\n    reply: true\n', 'r.yaml').problems.map(formatProblem),
    ).toEqual(['r.yaml:4:12: steps[0].reply: expected false (leave it out for a reply), got true']);
  });

  test('refuses a crash followed only by session boundaries: the armed point would never be reached', async () => {
    const check = checkScenarioText(
      'name: c\nsteps:\n  - user: hi\n  - crash: before_model_call\n  - session: new\n',
      'c.yaml',
    );
    expect(check.problems.map(formatProblem)).toEqual([
      'c.yaml:4:12: steps[1].crash: a crash with no step after it has nothing left to crash into: put it before the step it should interrupt',
    ]);
  });

  test('derives a valid name from an unusual file name', async () => {
    expect(checkScenarioText('steps:\n  - user: hi\n', 'dir/My File (2).yaml').scenario?.name).toBe('my-file-2-');
  });
});

describe('memory of loaded steps', () => {
  test('steps of one shape share one hidden class (a dataset question holds hundreds of them)', () => {
    // V8's own check, compiled after the flag is set; Node 20's V8 gives an object built by
    // `{ ...data, kind }` a hidden class of its own once the spread is warm (~120 bytes a step).
    setFlagsFromString('--allow-natives-syntax');
    const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;
    const steps = Array.from({ length: 200 }, (_, i) => ({
      id: `t${i}`,
      user: `message ${i}`,
      assistant: 'Noted.',
      replyId: `r${i}`,
      at: '2023-05-20T02:21:00Z',
    }));
    const { scenario } = checkScenarioValue({ name: 'shapes', steps }, 'shapes.yaml');
    const loaded = scenario!.steps;
    expect(loaded).toHaveLength(200);
    expect(loaded.filter((step) => !haveSameMap(step, loaded[0]!))).toEqual([]);
    // The same read from a file's text, whose scenario is copied out of it (structuredClone).
    const fromText = checkScenarioText(JSON.stringify({ name: 'shapes', steps }), 'shapes.json').scenario!.steps;
    expect(fromText).toEqual(loaded);
    expect(fromText.filter((step) => !haveSameMap(step, fromText[0]!))).toEqual([]);
  });

  test("a scenario read from a file's text does not keep the text alive (its strings are its own, not views into it)", () => {
    const base = heapAfterGc();
    const line = 'a long message of a large file, '.repeat(8);
    let text: string | undefined =
      `name: a-scenario-with-a-long-name\ngroup: a group of long scenarios\nsteps:\n${'  - user: "'.concat(line, '"\n').repeat(50_000)}  - probe: what was said?\n    expect: ["a long message of a large file"]\n`;
    // What a run keeps of a scenario after it (its name, group and a probe's gold), the scenario let go.
    const keep = (check: ReturnType<typeof checkScenarioText>) => {
      const probe = check.scenario!.steps.at(-1)!;
      return {
        name: check.scenario!.name,
        group: check.scenario!.group,
        expect: probe.kind === 'probe' ? probe.expect : [],
      };
    };
    const kept = keep(checkScenarioText(text, 'large.yaml'));
    expect(heapAfterGc() - base).toBeGreaterThan(12_000_000); // the text, ~13 MB
    text = undefined;
    expect(heapAfterGc() - base).toBeLessThan(2_000_000);
    expect(kept.name).toBe('a-scenario-with-a-long-name');
  });
});
