/** What `work` throws, for tests that look at an error's fields; a test fails when it throws nothing. */
export function thrown(work: () => unknown): unknown {
  try {
    work();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error, and nothing was thrown');
}
