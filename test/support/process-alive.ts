/**
 * Whether a process is still there, by sending it signal 0 (nothing is delivered; the kernel only checks
 * that the pid exists and may be signalled). For tests that watch a child or grandchild exit. A pid reused
 * by a new process reads as alive; a process of another user reads as gone.
 */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
