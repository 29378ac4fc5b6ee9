/**
 * An evidence id LoCoMo lists twice (`["D4:5", "D4:5", "D5:5"]`): kept twice and listed in the
 * import report, counted twice by LoCoMo's recall (task_eval/evaluation.py iterates the list), and
 * one message of evidence for membench's own evidence recall.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Step } from '../../../../harness/scenarios/format.js';
import { ImportLog, importScenarios } from '../../../../harness/scenarios/importers/index.js';
import { evidenceTable, probeEvidence } from '../../../../harness/scenarios/evidence.js';
import { locomoFigures } from '../../../../harness/results/protocols.js';
import { tempDirSync } from '../../../helpers/temp-dir.js';

const turn = (session: number, index: number, speaker: string, text: string) => ({
  speaker,
  dia_id: `D${session}:${index}`,
  text,
});

const SAMPLE = {
  sample_id: 'dup',
  conversation: {
    speaker_a: 'Ann',
    speaker_b: 'Bo',
    session_1_date_time: '1:56 pm on 8 May, 2023',
    session_1: [turn(1, 1, 'Ann', 'I adopted a cat called Miso.'), turn(1, 2, 'Bo', 'Lovely name!')],
    session_2_date_time: '10:30 am on 27 May, 2023',
    session_2: [turn(2, 1, 'Bo', 'How is Miso?'), turn(2, 2, 'Ann', 'Miso sleeps all day.')],
  },
  qa: [
    { question: 'What is the name of Ann’s cat?', answer: 'Miso', evidence: ['D1:1', 'D1:1', 'D2:2'], category: 4 },
    { question: 'How is the cat?', answer: 'sleepy', evidence: ['D2:2'], category: 4 },
  ],
};

async function importSample() {
  const file = path.join(tempDirSync('membench-locomo-dup-'), 'locomo.json');
  writeFileSync(file, JSON.stringify([SAMPLE]));
  const log = new ImportLog('locomo', file);
  const steps: Step[] = [];
  for await (const imported of importScenarios('locomo', file, log)) steps.push(...imported.scenario.steps);
  return { steps, report: log.report() };
}

describe('duplicate LoCoMo evidence ids', () => {
  it('are kept as the dataset lists them and named in the import report', async () => {
    const { steps, report } = await importSample();
    const probes = steps.filter((step) => step.kind === 'probe');
    expect(probes.map((probe) => probe.evidence)).toEqual([['D1:1', 'D1:1', 'D2:2'], ['D2:2']]);
    const duplicates = report.repaired.filter((issue) => issue.code === 'evidence-duplicate');
    expect(duplicates.map((issue) => issue.where)).toEqual(['dup qa[0]']);
    expect(duplicates[0]!.message).toContain('D1:1');
  });

  it("count twice in LoCoMo's recall, as its code iterates the evidence list", () => {
    const ranking = [['D1:1'], ['D9:9'], ['D2:2']];
    const figures = locomoFigures(ranking, ['D1:1', 'D1:1', 'D2:2'], [1, 3]);
    // Top 1 holds D1:1, listed twice of three: 2/3 (1/2 were the list de-duplicated).
    expect(figures.turn.map((at) => at.recall)).toEqual([2 / 3, 1]);
    expect(locomoFigures([['D2:2'], ['D1:1']], ['D1:1', 'D1:1', 'D2:2'], [1]).turn[0]!.recall).toBe(1 / 3);
  });

  it("are one message of evidence for membench's own evidence recall", async () => {
    const { steps } = await importSample();
    const index = steps.findIndex((step) => step.kind === 'probe');
    const evidence = probeEvidence(steps[index]!, evidenceTable(steps, { rarity: false }));
    expect(evidence?.cited).toHaveLength(2);
  });
});
