/**
 * A process that resumes a scenario after a real SIGKILL is told how many session boundaries came
 * before: the exchanges it saves keep their session number, so `unit=session` documents still
 * group by session across the crash.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBenchmark } from '../../../harness/run/runner.js';
import { ok } from '../../helpers/cells.js';

const SCENARIO = `name: session-resume
description: two sessions, the agent process killed inside the second one.
language: en
steps:
  - id: a1
    user: What is a good stretch after running?
    assistant: Try a calf stretch.
  - session: new
  - id: b1
    user: I bought a used kayak last weekend.
    assistant: Nice.
  - crash: before_model_call
  - id: b2
    user: The seller drove it over from Tacoma.
    assistant: Good.
  - id: probe
    probe: Where did my kayak come from, Tacoma?
    expect: [Tacoma]
    evidence: [b1, b2]
`;

describe('a resumed agent process', () => {
  it('keeps numbering sessions where the killed one was', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'membench-session-resume-'));
    const file = path.join(dir, 'session-resume.yaml');
    await writeFile(file, SCENARIO);
    const result = await runBenchmark({
      scenarios: [file],
      strategies: ['bm25'],
      params: ['bm25.unit=session', 'bm25.index=user'],
    });
    const cell = ok(result.cells[0]);
    expect(cell.durabilityOutcome!.crashes.map((crash) => [crash.point, crash.reached, crash.signal])).toEqual([
      ['before_model_call', true, 'SIGKILL'],
    ]);
    const probe = cell.probes.find((item) => item.id === 'probe')!;
    // The second session is one document: b1, saved before the kill, and b2, saved after it.
    expect(probe.retrieved![0]).toEqual(['b1', 'b2']);
  });
});
