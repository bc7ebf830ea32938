/**
 * The assertion every configuration test makes of a refused setting: `load` throws the one ConfigError shape
 * (base/config-error.ts) — code `config_invalid`, the refusing process, and a problem that starts with the variable.
 */
import assert from 'node:assert/strict';
import { ConfigError } from '../../base/config-error.js';

/** `load` throws a ConfigError of `process` whose problems name `variable` (the message names it too); returns it. */
export function assertConfigRefused(load: () => unknown, process: string, variable: string): ConfigError {
  let thrown: unknown;
  try {
    load();
  } catch (err) {
    thrown = err;
  }
  assert.ok(thrown instanceof ConfigError, `not refused with a ConfigError: ${String(thrown)}`);
  assert.equal(thrown.code, 'config_invalid');
  assert.equal(thrown.details.process, process);
  assert.ok(
    thrown.details.problems.some((p) => p.startsWith(variable)),
    JSON.stringify(thrown.details.problems),
  );
  assert.ok(thrown.message.includes(variable));
  return thrown;
}
