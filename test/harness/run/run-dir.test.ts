/** The run dir's plan: what a resumed run takes from plan.json, not from the flags given to the resume. */
import { describe, expect, it } from 'vitest';
import { PLANNED_KEYS, RunDir } from '../../../harness/run/run-dir.js';
import { tempDirSync } from '../../helpers/temp-dir.js';

describe('plan.json', () => {
  it('keeps --keep-rankings, so a resumed run keeps whole rankings in the cells it has left, as in its earlier ones', async () => {
    expect(PLANNED_KEYS).toContain('keepRankings');
    const dir = tempDirSync('membench-run-dir-');
    await RunDir.fresh(dir, { strategies: ['bm25'], keepRankings: true }).open({ digest: 'd', ids: ['a/bm25'] });
    expect((await RunDir.resume(dir)).options).toMatchObject({ strategies: ['bm25'], keepRankings: true });
  });
});
