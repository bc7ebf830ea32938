/**
 * The checkouts a comparing bench (`npm run bench:pay-ab`, `npm run bench:signer`) is told to run side by side:
 * each entry's label, path and signer settings, the `NODE` setting read as the Node binary its services run on
 * (never handed to the signer as environment), and a malformed entry refused with the variable's name.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { parseBenchCheckouts } from '../../../bench/support/bench-checkouts.js';

describe('bench checkouts (BENCH_PAY_ROOTS, BENCH_SIGNER_ROOTS)', () => {
  it('reads labels, paths resolved against the current directory, and each signer settings', () => {
    const parsed = parseBenchCheckouts('base=/tmp/base,s2=.=TREASURY_PKCS11_SESSIONS:2;UV_THREADPOOL_SIZE:2', 'X');
    assert.deepEqual(parsed, [
      { label: 'base', root: '/tmp/base', signerEnv: {} },
      {
        label: 's2',
        root: path.resolve('.'),
        signerEnv: { TREASURY_PKCS11_SESSIONS: '2', UV_THREADPOOL_SIZE: '2' },
      },
    ]);
  });

  it('takes NODE as the binary the checkout runs on, not as the signer environment', () => {
    const [n20, n24] = parseBenchCheckouts('n20=.,n24=.=NODE:bin/node24;UV_THREADPOOL_SIZE:4', 'BENCH_PAY_ROOTS');
    assert.equal(n20!.node, undefined);
    assert.equal(n24!.node, path.resolve('bin/node24'));
    assert.deepEqual(n24!.signerEnv, { UV_THREADPOOL_SIZE: '4' });
  });

  it('refuses an entry without a path, naming the variable', () => {
    assert.throws(() => parseBenchCheckouts('base', 'BENCH_PAY_ROOTS'), /BENCH_PAY_ROOTS: expected label=path/);
    assert.throws(() => parseBenchCheckouts('a=b=c=d', 'BENCH_SIGNER_ROOTS'), /BENCH_SIGNER_ROOTS/);
  });
});
