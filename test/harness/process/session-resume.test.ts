/**
 * A process that resumes a scenario after a real SIGKILL is told how many session boundaries came
 * before: the exchanges it saves keep their session number, so `unit=session` documents still
 * group by session across the crash. The run is the built one (test/helpers/built.ts): its agent
 * processes start from the bundle, as a user's do.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type * as Runner from '../../../harness/run/runner.js';
import { builtModule } from '../../helpers/built.js';
import { ok } from '../../helpers/cells.js';

const { runBenchmark } = await builtModule<typeof Runner>('harness/run/runner.js');

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
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
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
