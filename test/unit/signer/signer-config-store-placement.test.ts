/**
 * The signer's configuration carries the policy store's placement rules (signer/config/owner-policy-config.ts
 * `placement`: production mode and TREASURY_SIGNER_ACCEPT_STORE_ROLES, parsed once), which signer/main.ts hands to
 * the store — the store reads no environment. A production configuration with several problems, a missing policy
 * store among them, names every one of them in one error, the missing store beside the others
 * (signer/config/signer-production-mode.ts).
 */
import assert from 'node:assert/strict';
import { loadSignerConfig, SignerConfigError } from '../../../signer/config/signer-config.js';

const SOCKET = { TREASURY_SIGNER_SOCKET: '/tmp/treasury-signer-placement.sock' };
const STORE = { TREASURY_SIGNER_DATABASE_URL: 'postgres://signer:db-password@127.0.0.1:5432/signer' };

/** The variable each problem of `env`'s refusal names, in order. */
function refusedVariables(env: Record<string, string>): string[] {
  let refusal: unknown;
  try {
    loadSignerConfig(env);
  } catch (err) {
    refusal = err;
  }
  assert.ok(refusal instanceof SignerConfigError, `refused with a SignerConfigError: ${String(refusal)}`);
  for (const secret of ['1234', 'db-password']) assert.ok(!refusal.message.includes(secret));
  return refusal.details.problems.map((p) => /^[A-Z0-9_]+/.exec(p)?.[0] ?? p);
}

describe("signer configuration: the policy store's placement rules and production mode's problems together", () => {
  it('carries the accepted roles, each named once as given, and production mode', () => {
    const config = loadSignerConfig({
      ...SOCKET,
      ...STORE,
      TREASURY_PKCS11_PIN: '1234',
      TREASURY_SIGNER_ACCEPT_STORE_ROLES: ' backup_reader, pg_monitor_ops ,treasury_admin',
    });
    assert.deepEqual(config.ownerPolicies?.placement, {
      production: false,
      acceptedRoles: ['backup_reader', 'pg_monitor_ops', 'treasury_admin'],
    });
    assert.ok(Object.isFrozen(config.ownerPolicies?.placement.acceptedRoles));
  });

  it('carries no accepted role when none is named, and production mode when TREASURY_ENV says so', () => {
    const config = loadSignerConfig({
      ...SOCKET,
      ...STORE,
      TREASURY_ENV: 'production',
      TREASURY_KEY_BACKEND: 'aws-kms',
      TREASURY_KMS_REGION: 'eu-west-1',
      TREASURY_SIGNER_STORE_WATERMARK_FILE: '/var/lib/treasury-signer/store-watermark.json',
      TREASURY_SIGNER_ALLOWED_TOKENS: '8453:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    });
    assert.deepEqual(config.ownerPolicies?.placement, { production: true, acceptedRoles: [] });
  });

  it('refuses accepted roles without a store, and a list that names none', () => {
    assert.deepEqual(
      refusedVariables({ ...SOCKET, TREASURY_PKCS11_PIN: '1234', TREASURY_SIGNER_ACCEPT_STORE_ROLES: 'writer' }),
      ['TREASURY_SIGNER_ACCEPT_STORE_ROLES'],
    );
    assert.deepEqual(
      refusedVariables({ ...SOCKET, ...STORE, TREASURY_PKCS11_PIN: '1234', TREASURY_SIGNER_ACCEPT_STORE_ROLES: ' , ' }),
      ['TREASURY_SIGNER_ACCEPT_STORE_ROLES'],
    );
  });

  it('lists a missing policy store beside every other production problem, in one error', () => {
    assert.deepEqual(refusedVariables({ ...SOCKET, NODE_ENV: 'production', TREASURY_PKCS11_PIN: '1234' }), [
      'TREASURY_PKCS11_PIN',
      'TREASURY_PKCS11_PIN',
      'TREASURY_SIGNER_DATABASE_URL',
      'TREASURY_SIGNER_ALLOWED_TOKENS',
    ]);
    assert.deepEqual(
      refusedVariables({
        ...SOCKET,
        NODE_ENV: 'production',
        TREASURY_KEY_BACKEND: 'aws-kms',
        TREASURY_KMS_REGION: 'eu-west-1',
        TREASURY_KMS_ENDPOINT: 'http://127.0.0.1:4599',
      }),
      ['TREASURY_SIGNER_DATABASE_URL', 'TREASURY_KMS_ENDPOINT', 'TREASURY_SIGNER_ALLOWED_TOKENS'],
    );
  });
});
