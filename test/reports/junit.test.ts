import { describe, expect, it } from 'vitest';
import { renderRunStepSummary } from '../../reports/github-summary.js';
import { renderJunit, xmlAttribute, xmlText } from '../../reports/junit.js';
import { cellOf, renameScenario, smallRun } from './fixture.js';

interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  text: string;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decode(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/giu, (whole, entity: string) => {
    if (entity.startsWith('#x')) return String.fromCodePoint(parseInt(entity.slice(2), 16));
    if (entity.startsWith('#')) return String.fromCodePoint(Number(entity.slice(1)));
    const value = ENTITIES[entity];
    if (value === undefined) throw new Error(`unknown entity ${whole}`);
    return value;
  });
}

/** A small strict parser: balanced tags, quoted attributes, only known entities, no stray `<` or `&`. */
function parseXml(xml: string): XmlElement {
  if (!xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n')) throw new Error('missing XML declaration');
  const body = xml.slice(xml.indexOf('?>') + 2);
  const stack: XmlElement[] = [{ name: '#document', attributes: {}, children: [], text: '' }];
  const token = /<(\/?)([A-Za-z][\w-]*)((?:\s+[\w-]+="[^"<]*")*)\s*(\/?)>|([^<]+)/gy;
  let match: RegExpExecArray | null;
  let consumed = 0;
  while ((match = token.exec(body)) !== null) {
    consumed = token.lastIndex;
    const [, closing, name, rawAttributes, selfClosing, text] = match;
    const top = stack.at(-1)!;
    if (text !== undefined) {
      if (/&(?!(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);)/iu.test(text))
        throw new Error(`bare & in ${JSON.stringify(text.slice(0, 40))}`);
      top.text += decode(text);
      continue;
    }
    if (closing) {
      if (top.name !== name) throw new Error(`</${name}> closes <${top.name}>`);
      stack.pop();
      continue;
    }
    const attributes: Record<string, string> = {};
    for (const [, key, value] of rawAttributes!.matchAll(/([\w-]+)="([^"]*)"/gu)) {
      if (key! in attributes) throw new Error(`duplicate attribute ${key}`);
      attributes[key!] = decode(value!);
    }
    const element: XmlElement = { name: name!, attributes, children: [], text: '' };
    top.children.push(element);
    if (!selfClosing) stack.push(element);
  }
  if (consumed !== body.length)
    throw new Error(`cannot parse at ${JSON.stringify(body.slice(consumed, consumed + 60))}`);
  if (stack.length !== 1) throw new Error(`unclosed <${stack.at(-1)!.name}>`);
  const roots = stack[0]!.children;
  if (roots.length !== 1) throw new Error('expected one root element');
  return roots[0]!;
}

const byName = (element: XmlElement, name: string) => element.children.filter((child) => child.name === name);

describe('junit.xml', () => {
  it('has one testsuite per scenario and one testcase per cell, all passing without a threshold', () => {
    const result = smallRun();
    const root = parseXml(renderJunit(result));
    expect(root.name).toBe('testsuites');
    expect(root.attributes).toMatchObject({ tests: '6', failures: '0', errors: '0' });
    const suites = byName(root, 'testsuite');
    expect(suites.map((suite) => suite.attributes.name)).toEqual(['recipes-zh', 'preference-corrections']);
    for (const suite of suites) {
      const cases = byName(suite, 'testcase');
      expect(cases.map((testcase) => testcase.attributes.name)).toEqual(['buffer', 'window(k=2)', 'window(k=4)']);
      expect(
        cases.every((testcase) => byName(testcase, 'failure').length === 0 && byName(testcase, 'error').length === 0),
      ).toBe(true);
      expect(byName(cases[0]!, 'system-out')[0]!.text).toMatch(/context recall 1\.00 \(\d+\/\d+\)/u);
      expect(byName(byName(suite, 'properties')[0]!, 'property').map((property) => property.attributes.name)).toContain(
        'seed',
      );
    }
  });

  it('fails cells below the recall threshold, naming the missed probes', () => {
    const result = smallRun();
    const root = parseXml(renderJunit(result, { recallThreshold: 0.5 }));
    const failing = byName(root, 'testsuite').flatMap((suite) =>
      byName(suite, 'testcase').filter((testcase) => byName(testcase, 'failure').length > 0),
    );
    const expected = result.cells.filter((cell) => cell.recall.contextRecall.value! < 0.5);
    expect(failing).toHaveLength(expected.length);
    expect(root.attributes.failures).toBe(String(expected.length));
    const failure = byName(failing[0]!, 'failure')[0]!;
    expect(failure.attributes.type).toBe('recall');
    expect(failure.attributes.message).toMatch(/context recall 0\.\d\d \(\d+\/\d+\) is below the threshold 0\.50/u);
    expect(failure.text).toMatch(/missed: step \d+/u);
  });

  it('reports an errored cell as an error and a violated invariant as a failure', () => {
    const result = smallRun();
    Object.assign(cellOf(result, 'recipes-zh/window(k=2)'), {
      status: 'error',
      error: 'disk full <at> step 3 & "then" \u0001 more',
    });
    Object.assign(cellOf(result, 'recipes-zh/window(k=4)'), {
      durabilityOutcome: {
        crashes: [],
        invariants: {
          '1': {
            held: false,
            checked: 5,
            violations: 2,
            details: ['remembered "peanut allergy" missing after crash at step 4'],
          },
          '2': { held: true, checked: 5, violations: 0, details: [] },
        },
      },
    });
    const root = parseXml(renderJunit(result));
    expect(root.attributes).toMatchObject({ failures: '1', errors: '1' });
    const cases = byName(byName(root, 'testsuite')[0]!, 'testcase');
    const error = byName(cases[1]!, 'error')[0]!;
    expect(error.attributes.message).toBe('disk full <at> step 3 & "then" \uFFFD more');
    const failure = byName(cases[2]!, 'failure')[0]!;
    expect(failure.attributes.type).toBe('invariant');
    expect(failure.attributes.message).toBe(
      'invariant "1 acknowledged memories survive crashes" violated 2 time(s) in 5 check(s)',
    );
    expect(failure.text).toContain('invariant 1: remembered "peanut allergy" missing after crash at step 4');
  });

  it('escapes every name and message so the document stays well-formed', () => {
    const name = `a<b>&c"d'e\n食谱\u0000\u{1F600}`;
    const result = renameScenario(smallRun(), 'recipes-zh', name);
    const root = parseXml(renderJunit(result));
    expect(byName(root, 'testsuite')[0]!.attributes.name).toBe(`a<b>&c"d'e\n食谱\uFFFD\u{1F600}`);
    expect(xmlText('<&>')).toBe('&lt;&amp;&gt;');
    expect(xmlAttribute('"\'\n')).toBe('&quot;&apos;&#10;');
    expect(xmlText('\uD800 lone')).toBe('\uFFFD lone');
  });
  it('makes a scenario group one testsuite with one testcase per strategy setting, pooled', () => {
    const result = smallRun();
    for (const cell of result.cells) Object.assign(cell, { group: 'longmemeval:longmemeval_s.json' });
    Object.assign(cellOf(result, 'recipes-zh/window(k=2)'), { status: 'error', error: 'worker died' });
    const root = parseXml(renderJunit(result, { recallThreshold: 0.7 }));
    const suites = byName(root, 'testsuite');
    expect(suites.map((suite) => suite.attributes.name)).toEqual(['longmemeval:longmemeval_s.json']);
    const cases = byName(suites[0]!, 'testcase');
    expect(cases.map((testcase) => testcase.attributes.name)).toEqual(['buffer', 'window(k=2)', 'window(k=4)']);
    expect(byName(cases[0]!, 'failure')).toHaveLength(0);
    expect(byName(cases[1]!, 'error')[0]!.attributes.message).toBe(
      '1 of 2 scenario(s) errored, first: recipes-zh: worker died',
    );
    expect(byName(cases[2]!, 'failure')[0]!.attributes.message).toMatch(
      /^pooled context recall 0\.\d\d \(\d+\/\d+\) is below the threshold 0\.70/u,
    );
    expect(byName(cases[0]!, 'system-out')[0]!.text).toMatch(
      /^2 scenario\(s\) of group longmemeval:longmemeval_s\.json; context recall 1\.00/u,
    );
  });

  it('fails a threshold on a cell, or a group, where no probe was scored, and says so', () => {
    const result = smallRun();
    const empty = { n: 0, hits: 0, value: null };
    const emptied = cellOf(result, 'recipes-zh/buffer');
    emptied.probes = [];
    emptied.recall.contextRecall = { ...emptied.recall.contextRecall, ...empty };
    // Without a threshold recall gates nothing: the empty cell passes as before.
    expect(parseXml(renderJunit(result)).attributes.failures).toBe('0');
    const root = parseXml(renderJunit(result, { recallThreshold: 0 }));
    expect(root.attributes.failures).toBe('1');
    const failing = byName(root, 'testsuite').flatMap((suite) =>
      byName(suite, 'testcase').filter((testcase) => byName(testcase, 'failure').length > 0),
    );
    expect(failing.map((testcase) => testcase.attributes.name)).toEqual(['buffer']);
    expect(byName(failing[0]!, 'failure')[0]!.attributes.message).toBe(
      'context recall: 0 probes scored (the cell has no probe): the threshold 0.00 cannot pass on an empty measurement',
    );
    // A group whose every cell scored nothing: its pooled testcase fails.
    for (const cell of result.cells) {
      Object.assign(cell, { group: 'locomo:errata-dropped-all.json' });
      cell.recall.contextRecall = { ...cell.recall.contextRecall, ...empty };
    }
    const grouped = byName(
      byName(parseXml(renderJunit(result, { recallThreshold: 0.9 })), 'testsuite')[0]!,
      'testcase',
    );
    expect(grouped.map((testcase) => byName(testcase, 'failure')[0]?.attributes.message)).toEqual(
      grouped.map(() =>
        expect.stringMatching(
          /^pooled context recall: 0 probes scored \(none of its \d+ probes has an expected answer/u,
        ),
      ),
    );
  });

  it('fails a threshold on a run of no cell (an empty shard), in junit.xml and the step summary', () => {
    const result = smallRun();
    const shard = { index: 5, count: 200, planned: result.cells.length, digest: 'd' };
    const empty = { ...result, header: { ...result.header, shard }, cells: [] };
    // Without a threshold an empty shard gates nothing (a CI matrix with more shards than cells).
    expect(parseXml(renderJunit(empty)).attributes).toMatchObject({ tests: '0', failures: '0' });
    expect(renderRunStepSummary(empty)).toContain('## membench run: 0 cells passed');
    const root = parseXml(renderJunit(empty, { recallThreshold: 0.9 }));
    expect(root.attributes).toMatchObject({ tests: '1', failures: '1' });
    const message = `context recall: 0 cells run: shard 5/200 holds none of the plan's ${result.cells.length} cells (only shards 1 to ${result.cells.length} hold any); the threshold 0.90 cannot pass on an empty measurement`;
    const [testcase] = byName(byName(root, 'testsuite')[0]!, 'testcase');
    expect(byName(testcase!, 'failure')[0]!.attributes.message).toBe(message);
    expect(renderRunStepSummary(empty, { recallThreshold: 0.9 })).toContain(`## membench run: failed: ${message}`);
    // A whole run of no cell (a library caller's) fails the same gate in its own words.
    const whole = parseXml(renderJunit({ ...empty, header: result.header }, { recallThreshold: 0 }));
    const [wholeCase] = byName(byName(whole, 'testsuite')[0]!, 'testcase');
    expect(byName(wholeCase!, 'failure')[0]!.attributes.message).toBe(
      'context recall: 0 cells run: the run has no cell; the threshold 0.00 cannot pass on an empty measurement',
    );
  });
});
