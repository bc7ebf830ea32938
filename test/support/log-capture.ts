/** A logger made by src/api/log/logger.ts (its redaction included) whose JSON lines are kept in memory for a test to search. */
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/api/log/logger.js';

export interface CapturedLog {
  log: Logger;
  /** Every line written so far, raw. */
  lines: string[];
  /** All lines joined, to search for a value that must not be there. */
  text(): string;
}

export function captureLog(level = 'info'): CapturedLog {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(
        ...chunk
          .toString('utf8')
          .split('\n')
          .filter((l) => l !== ''),
      );
      done();
    },
  });
  return { log: createLogger(level, 'treasury-test', stream), lines, text: () => lines.join('\n') };
}
