/**
 * The assertion every configuration test makes of a refused setting: `load` throws the one ConfigError shape
 * (base/config-error.ts) — code `config_invalid`, the refusing process, and a problem that starts with the variable.
 */
import assert from 'node:assert/strict';
import { ConfigError } from '../../base/config-error.js';

/** `load` throws a ConfigError of `process` whose problems name `variable` (the message names it too). */
export function assertConfigRefused(load: () => unknown, process: string, variable: string): void {
  assert.throws(load, (err: unknown) => {
    assert.ok(err instanceof ConfigError, String(err));
    assert.equal(err.code, 'config_invalid');
    assert.equal(err.details.process, process);
    assert.ok(
      err.details.problems.some((p) => p.startsWith(variable)),
      JSON.stringify(err.details.problems),
    );
    assert.ok(err.message.includes(variable));
    return true;
  });
}
