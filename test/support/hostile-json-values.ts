/**
 * The hostile values of test/vectors/hostile-inputs.json as one flat list (every list of the file but its notes),
 * for tests that hold a serialisation to a spelling over all of them; and whether a value holds an own `__proto__`
 * key at any depth (JSON.parse makes one an own key, which an assignment would not).
 */
import fs from 'node:fs';
import path from 'node:path';

const hostile = JSON.parse(
  fs.readFileSync(path.resolve(import.meta.dirname, '../vectors/hostile-inputs.json'), 'utf8'),
) as Record<string, unknown>;

export const hostileJsonValues: readonly unknown[] = Object.entries(hostile)
  .filter(([name]) => name !== 'about' && name !== 'notes')
  .flatMap(([, list]) => (Array.isArray(list) ? list : []));

/** Whether `value` holds an own `__proto__` key at any depth. */
export const holdsProtoKey = (value: unknown): boolean =>
  value !== null &&
  typeof value === 'object' &&
  (Object.hasOwn(value, '__proto__') || Object.values(value).some(holdsProtoKey));
