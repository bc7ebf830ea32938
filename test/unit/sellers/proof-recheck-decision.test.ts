/**
 * The re-check of a proof of control, its pure parts (src/api/sellers/proofs/proof-recheck-decision.ts): which fetch
 * errors are definitive and which transient, and what each decides against the grace; and the one token rule of
 * every proof (src/api/sellers/origin/origin-verifier.ts `servesToken`): a line of its own, trimmed, equals the
 * token — a word inside a longer line does not count.
 */
import assert from 'node:assert/strict';
import { AppError } from '../../../src/api/errors/app-error.js';
import { servesToken } from '../../../src/api/sellers/origin/origin-verifier.js';
import { decideRecheck, fetchOutcomeOf } from '../../../src/api/sellers/proofs/proof-recheck-decision.js';

const TOKEN = `xx-verify-${'ab'.repeat(16)}`;
const DAY = 86_400;
const proven = new Date('2026-12-01T00:00:00Z');
const after = (seconds: number) => new Date(proven.getTime() + seconds * 1000);

describe('proof re-check: the token rule', () => {
  it('accepts the token alone on a line, with CRLF, surrounding spaces and other lines', () => {
    assert.ok(servesToken(`${TOKEN}\n`, TOKEN));
    assert.ok(servesToken(TOKEN, TOKEN));
    assert.ok(servesToken(`# our verification file\r\n  ${TOKEN}  \r\n`, TOKEN));
    assert.ok(servesToken(`\txx-gate-other\n${TOKEN}\t\n`, TOKEN));
  });

  it('refuses the token inside a longer line, a prefix of it, or nothing', () => {
    assert.equal(servesToken(`see ${TOKEN} here`, TOKEN), false);
    assert.equal(servesToken(`token: ${TOKEN}\n`, TOKEN), false);
    assert.equal(servesToken(`${TOKEN}0\n`, TOKEN), false);
    assert.equal(servesToken(TOKEN.slice(0, -1), TOKEN), false);
    assert.equal(servesToken('', TOKEN), false);
  });
});

describe('proof re-check: the decision', () => {
  const decide = (error: unknown, sinceProven: number) =>
    decideRecheck({
      outcome: fetchOutcomeOf(error),
      lastProvenAt: proven,
      now: after(sinceProven),
      graceSeconds: 7 * DAY,
    });

  it('a file that still serves the token is proven again', () => {
    assert.deepEqual(decide(undefined, 30 * DAY), { outcome: 'proven' });
  });

  it('withdraws at once on a definitive failure, whatever the grace', () => {
    for (const code of [
      'verification_token_mismatch',
      'gate_verification_token_mismatch',
      'well_known_not_found',
      'gate_verification_not_found',
      'origin_not_public',
      'origin_redirect_refused',
      'origin_port_refused',
    ] as const)
      assert.deepEqual(decide(new AppError(code), 60), { outcome: 'withdrawn', reason: code }, code);
  });

  it('keeps a proof within the grace on a transient failure, and withdraws it after', () => {
    for (const code of ['origin_unreachable', 'origin_response_too_large'] as const) {
      assert.deepEqual(decide(new AppError(code), DAY), { outcome: 'kept', reason: code });
      assert.deepEqual(decide(new AppError(code), 7 * DAY), { outcome: 'kept', reason: code }, 'at the grace exactly');
      assert.deepEqual(decide(new AppError(code), 7 * DAY + 1), { outcome: 'withdrawn', reason: 'grace_expired' });
    }
  });

  it('throws on an error that is not the fetch outcome (ours: it is retried after the lease)', () => {
    assert.throws(() => fetchOutcomeOf(new Error('database down')), /database down/);
    assert.throws(
      () => fetchOutcomeOf(new AppError('internal_error')),
      (e: unknown) => e instanceof AppError,
    );
  });
});
