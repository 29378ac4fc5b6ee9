/** Whether a process is still there: how a lock or a temp dir left by a killed run is told from a live one's. */

/** True while a process with this pid exists (also one of another user: EPERM). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
