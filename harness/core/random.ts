/**
 * A small seeded generator (mulberry32) for synthetic fixture files and test conversations: the
 * same numbers in [0, 1) for the same seed on every machine. The harness's own draws (filler,
 * crash fuzzing) use pure-rand; this one exists so file writers need no generator state object.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
