/**
 * The rules of eslint.config.js beyond the floors (layer-lint.test.ts covers those) do their job: probe files
 * placed (virtually: nothing is written to disk) where each rule applies break it, and ESLint must report
 * every one; the nearest thing each rule allows must pass clean. base/ imports nothing; policy/ imports only
 * what keeps it pure; a file holds at most 400 lines and a function at most 80 lines of code; the one
 * exemption from the size rules, the long functions of landed migrations, is named by path.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { ESLint } from 'eslint';

const ROOT = path.resolve(import.meta.dirname, '../../..');
/** A file eslint.config.js exempts from the function-length rule, by its path (a landed migration, never edited). */
const EXEMPT_PATH = 'migrations/20261125200400_ledger_verification.ts';

/** A function `lines` lines long (its braces included), with `padding` comment and blank lines besides. */
function longFunction(lines: number, padding = 0): string {
  const body = Array.from({ length: lines - 4 }, (_, i) => `  total += ${i};`);
  const pad = Array.from({ length: padding }, (_, i) => (i % 2 ? '' : `  // step ${i}`));
  return ['export function probe(): number {', '  let total = 0;', ...pad, ...body, '  return total;', '}', ''].join(
    '\n',
  );
}

describe('rule lint (eslint.config.js)', function () {
  this.timeout(120_000);
  let eslint: ESLint;
  before(() => {
    eslint = new ESLint({ cwd: ROOT });
  });
  const rulesOf = async (at: string, code: string) => {
    const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, at) });
    assert.ok(result, `no lint result for ${at}`);
    assert.ok(!result.messages.some((m) => m.fatal), `${at}: parse error ${JSON.stringify(result.messages)}`);
    return result.messages.map((m) => m.ruleId);
  };
  /** Every probe is reported by one of `rules`. */
  const reportsAll = async (at: string, rules: string[], probes: string[]) => {
    const missed: string[] = [];
    for (const code of probes) {
      const ids = await rulesOf(at, code);
      if (!ids.some((id) => id !== null && rules.includes(id))) missed.push(`${at}: ${code} (${ids.join(', ')})`);
    }
    assert.deepEqual(missed, []);
  };
  const passesAll = async (at: string, probes: string[]) => {
    for (const code of probes) assert.deepEqual(await rulesOf(at, code), [], `${at}: ${code}`);
  };
  const IMPORT_RULES = ['no-restricted-imports', 'no-restricted-syntax'];

  it('base/ imports nothing: no package, no Node built-in, no dynamic import', async () => {
    await reportsAll('base/probe.ts', IMPORT_RULES, [
      "import fs from 'node:fs';\nexport const probe = fs;\n",
      "import { EventEmitter } from 'events';\nexport const probe = EventEmitter;\n",
      "import { z } from 'zod';\nexport const probe = z;\n",
      "import type { Knex } from 'knex';\nexport type Probe = Knex;\n",
      "export * from 'viem';\n",
      "export const probe = () => import('./closeables.js');\n",
    ]);
    await passesAll('base/probe.ts', [
      "import { BaseError } from './base-error.js';\nexport const probe = BaseError;\n",
    ]);
  });

  it('policy/ is pure: zod, viem address checksums, its own files and base/ only', async () => {
    await reportsAll('policy/rules/probe.ts', IMPORT_RULES, [
      "import fs from 'node:fs';\nexport const probe = fs;\n",
      "import { randomBytes } from 'crypto';\nexport const probe = randomBytes;\n",
      "import pg from 'pg';\nexport const probe = pg;\n",
      "import { createPublicClient, http } from 'viem';\nexport const probe = [createPublicClient, http];\n",
      "import * as viem from 'viem';\nexport const probe = viem;\n",
      "export { http } from 'viem';\n",
      "import { privateKeyToAccount } from 'viem/accounts';\nexport const probe = privateKeyToAccount;\n",
      "export const probe = () => import('../money.js');\n",
    ]);
    await passesAll('policy/rules/probe.ts', [
      "import { getAddress, isAddress } from 'viem';\nexport const probe = [getAddress, isAddress];\n",
      "import { z } from 'zod';\nexport const probe = z;\n",
      "import { parseUsd } from '../money.js';\nexport const probe = parseUsd;\n",
      "import { BaseError } from '../../base/base-error.js';\nexport const probe = BaseError;\n",
    ]);
  });

  it('a function longer than 80 lines of code is reported wherever production code lives', async () => {
    for (const at of [
      'src/cli/probe.ts',
      'src/api/pay/probe.ts',
      'signer/probe.ts',
      'ops/probe.ts',
      'policy/probe.ts',
    ]) {
      await reportsAll(
        at,
        ['max-lines-per-function'],
        [longFunction(81), `export const probe = () => {\n${longFunction(81)}\n  return 0;\n};\n`],
      );
      // 80 lines of code pass, however many comments and blank lines explain them.
      await passesAll(at, [longFunction(80, 40)]);
    }
  });

  it('a file longer than 400 lines is reported', async () => {
    const lines = (n: number) => Array.from({ length: n }, (_, i) => `export const c${i} = ${i};`).join('\n') + '\n';
    await reportsAll('src/x402/probe.ts', ['max-lines'], [lines(401)]);
    await passesAll('src/x402/probe.ts', [lines(400)]);
  });

  it('exempts by path only the files it names, and holds tests and benches to neither size rule', async () => {
    // The exempt file is exempt...
    assert.deepEqual(await rulesOf(EXEMPT_PATH, longFunction(120)), []);
    // ...and another file in the same folder, or a file of the same name elsewhere, is not.
    await reportsAll('migrations/probe.ts', ['max-lines-per-function'], [longFunction(120)]);
    await reportsAll(
      path.join('src/api/identity', path.basename(EXEMPT_PATH)),
      ['max-lines-per-function'],
      [longFunction(120)],
    );
    // The files once exempt until they were split are held to both rules again.
    for (const at of [
      'ops/sandbox/start.ts',
      'dashboard/src/pages/seller-ledger.tsx',
      'ops/docs/configuration-entries.ts',
    ])
      await reportsAll(at, ['max-lines-per-function'], [longFunction(120)]);
    assert.deepEqual(await rulesOf('test/unit/probe.ts', longFunction(300)), []);
    assert.deepEqual(await rulesOf('bench/probe.ts', longFunction(300)), []);
  });
});
