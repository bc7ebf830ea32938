/**
 * Runs a CLI step with process.stderr captured: its exit code and what it wrote there, the stream restored
 * after (also when it throws). For the unit tests of what the CLI prints on errors.
 */
export function captureStderr(fn: () => number): { code: number; text: string } {
  const write = process.stderr.write;
  let text = '';
  process.stderr.write = ((chunk: string | Uint8Array) => {
    text += String(chunk);
    return true;
  }) as typeof process.stderr.write;
  try {
    return { code: fn(), text };
  } finally {
    process.stderr.write = write;
  }
}
