/** A bench report's header for tests that render a hand-made report: fixed machine and versions, what each test sets on top. */
import type { BenchReport } from '../../harness/bench/index.js';

export function benchHeader(overrides: Partial<BenchReport['header']> = {}): BenchReport['header'] {
  return {
    membenchVersion: '0',
    node: 'v20',
    platform: 'linux-x64',
    cpus: 2,
    cpuModel: 'cpu',
    loadAverage: { start: 0, end: 0 },
    quick: true,
    sections: [],
    tokenizer: 'cl100k_base',
    startedAt: '',
    durationMs: 0,
    ...overrides,
  };
}
