/**
 * `xx buy`'s ceiling when `--max` is not given (src/cli/commands/buy/buy-ceiling.ts): `--max`, else
 * `XX_BUY_MAX_USD`, else the profile's `buy_max_usd` (`xx login --buy-max`), else 1.00 — never unbounded; a
 * malformed value exits 2 naming where it came from.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buyCeiling, DEFAULT_BUY_MAX_USD } from '../../../src/cli/commands/buy/buy-ceiling.js';
import { createCliContext } from '../../../src/cli/core/cli-context.js';
import { saveCredentials } from '../../../src/cli/core/cli-state.js';

describe('xx buy: the price ceiling without --max', () => {
  let home: string;
  const saved = process.env.XX_BUY_MAX_USD;
  before(() => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'xx-buy-ceiling-'));
  });
  after(() => {
    fs.rmSync(home, { recursive: true, force: true });
    if (saved === undefined) delete process.env.XX_BUY_MAX_USD;
    else process.env.XX_BUY_MAX_USD = saved;
  });

  it('--max, then XX_BUY_MAX_USD, then the profile, then the default; a bad value is exit 2 naming its source', () => {
    const ctx = createCliContext({ json: true, env: { HOME: home, XX_HOME: home } });
    delete process.env.XX_BUY_MAX_USD;
    assert.deepEqual(buyCeiling(ctx, {}), { max_usd: DEFAULT_BUY_MAX_USD, source: 'default' });
    const profile = { token: 'xx_pat_aaaaaaaaaaaaaaaaaaaa', server: 'http://127.0.0.1:9', added_at: '2026-11-29' };
    saveCredentials(ctx.paths, {
      active: 'work',
      profiles: { work: { ...profile, buy_max_usd: '0.25' }, other: { ...profile, buy_max_usd: '3' } },
    });
    assert.deepEqual(buyCeiling(ctx, {}), { max_usd: '0.25', source: 'profile' });
    assert.deepEqual(buyCeiling(ctx, { profile: 'other' }), { max_usd: '3', source: 'profile' });
    process.env.XX_BUY_MAX_USD = '0.5';
    assert.deepEqual(buyCeiling(ctx, {}), { max_usd: '0.5', source: 'XX_BUY_MAX_USD' });
    assert.deepEqual(buyCeiling(ctx, { max: '2' }), { max_usd: '2', source: '--max' });
    process.env.XX_BUY_MAX_USD = 'lots';
    assert.throws(
      () => buyCeiling(ctx, {}),
      (err: Error & { exitCode?: number }) => {
        assert.match(err.message, /XX_BUY_MAX_USD/);
        return true;
      },
    );
    assert.throws(() => buyCeiling(ctx, { max: '-1' }), /--max/);
  });

  it('a profile named after a prototype key is no profile; a name outside the rule is exit 2 naming --profile', () => {
    const ctx = createCliContext({ json: true, env: { HOME: home, XX_HOME: home } });
    delete process.env.XX_BUY_MAX_USD;
    const profile = { token: 'xx_pat_aaaaaaaaaaaaaaaaaaaa', server: 'http://127.0.0.1:9', added_at: '2026-11-29' };
    saveCredentials(ctx.paths, { active: 'constructor', profiles: { work: { ...profile, buy_max_usd: '0.25' } } });
    assert.deepEqual(buyCeiling(ctx, {}), { max_usd: DEFAULT_BUY_MAX_USD, source: 'default' });
    assert.deepEqual(buyCeiling(ctx, { profile: 'toString' }), { max_usd: DEFAULT_BUY_MAX_USD, source: 'default' });
    assert.throws(
      () => buyCeiling(ctx, { profile: '__proto__' }),
      (err: Error & { exitCode?: number; code?: string }) => err.exitCode === 2 && err.code === 'invalid_argument',
    );
  });
});
