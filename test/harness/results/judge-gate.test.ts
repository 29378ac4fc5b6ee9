import { describe, expect, it } from 'vitest';
import { checkJudged, judgeRun, type Judge } from '../../../harness/results/judges.js';
import { MAX_UNPARSED_SHARE } from '../../../harness/results/judge-limits.js';
import { type OkRun, smallRun } from '../../reports/fixture.js';

/** A judge answering from a list of replies, in turn: the real judgeRun files them as a live judge's. */
function scripted(id: string, replies: readonly string[]): Judge {
  let next = 0;
  return {
    id,
    label: `${id} judge`,
    prompts: 'test',
    requests: 0,
    async judge() {
      const raw = replies[next++ % replies.length]!;
      return { verdict: raw === 'yes' || raw === 'no' ? raw : 'unparsed', raw, cached: false, tokens: 0 };
    },
  };
}

/** The fixture with gold on every answerable probe (the judges refuse a run without it). */
function judgeable(): OkRun {
  const result = smallRun();
  for (const probe of result.cells.flatMap((cell) => cell.probes)) probe.expect ??= ['x'];
  return result;
}

describe('the judge gate', () => {
  it('warns when more than 20 % of the replies are unreadable, and fails a threshold on it', async () => {
    const result = judgeable();
    const n = result.cells.flatMap((cell) => cell.probes).length;
    expect(n).toBeGreaterThan(10);
    const judged = await judgeRun(result, [scripted('openai:garbled', ['It depends.'])]);
    const open = checkJudged(judged, ['openai:garbled']);
    expect(open.warnings).toEqual([
      `warning: openai:garbled judge could not read ${n} of its ${n} replies as yes or no (100 %, more than 20 %): its accuracy is not a measurement; check the judge model and prompts (the raw replies are in results.json)`,
    ]);
    expect(open.failures).toEqual([]);
    expect(checkJudged(judged, ['openai:garbled'], 0).failures).toEqual([
      expect.stringMatching(/could not read .*: --judge-threshold 0 cannot pass on it$/u),
    ]);
  });

  it('draws the line at the share: 1 of 5 unreadable (20 %) passes, 2 of 5 fail', async () => {
    expect(MAX_UNPARSED_SHARE).toBe(0.2);
    const five = (): OkRun => {
      const result = judgeable();
      const [first, ...rest] = result.cells;
      first!.probes = first!.probes.slice(0, 5);
      for (const cell of rest) cell.probes = [];
      expect(first!.probes).toHaveLength(5);
      return result;
    };
    const atLimit = await judgeRun(five(), [scripted('openai:a', ['yes', 'yes', 'no', 'yes', '?'])]);
    expect(atLimit.judges![0]).toMatchObject({ judged: 5, unparsed: 1 });
    expect(checkJudged(atLimit, ['openai:a'], 0)).toEqual({ warnings: [], failures: [] });
    const over = await judgeRun(five(), [scripted('openai:b', ['yes', '?', 'no', '?', 'yes'])]);
    expect(checkJudged(over, ['openai:b'], 0).failures).toHaveLength(1);
  });

  it('fails an accuracy below the threshold, passes one at it, and fails a judge that judged nothing', async () => {
    const judged = await judgeRun(judgeable(), [scripted('openai:half', ['yes', 'no'])]);
    expect(checkJudged(judged, ['openai:half'], 0.4)).toEqual({ warnings: [], failures: [] });
    expect(checkJudged(judged, ['openai:half'], 0.9).failures).toEqual([
      expect.stringMatching(
        /^openai:half judge: answer accuracy 0\.\d\d \(\d+\/\d+\) is below --judge-threshold 0\.9$/u,
      ),
    ]);
    const empty = judgeable();
    for (const cell of empty.cells) cell.probes = [];
    const none = await judgeRun(empty, [scripted('offline', ['yes'])]);
    expect(checkJudged(none, ['offline']).warnings).toEqual([
      'warning: offline judge judged no answer (the run has no probe)',
    ]);
    expect(checkJudged(none, ['offline'], 0.5).failures).toHaveLength(1);
    // A run of no cell (an empty shard) is said as such.
    const noCell = await judgeRun({ ...judgeable(), cells: [] }, [scripted('offline', ['yes'])]);
    expect(checkJudged(noCell, ['offline'], 0.5).failures).toEqual([
      'offline judge judged no answer (the run has no cell): --judge-threshold 0.5 cannot pass on it',
    ]);
    // A judge named but absent from the results (it did not run) is not reported on.
    expect(checkJudged(none, ['openai:other'], 0.5)).toEqual({ warnings: [], failures: [] });
  });
});
