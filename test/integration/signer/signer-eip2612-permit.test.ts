/**
 * `sign_eip2612_permit` through the signer socket: an EIP-2612 `Permit` of the wallet's own USDC to the
 * configured (canonical) Permit2 is signed and recovers to the wallet; a permit to any other spender, for
 * another owner, above the per-signature maximum, already expired or valid too long is refused with
 * `invariant_violation` naming the rule as a field — nothing signed.
 */
import assert from 'node:assert/strict';
import { recoverTypedDataAddress } from 'viem';
import { startTestSigner, type TestSigner } from '../../support/signer-harness.js';
import { PERMIT, typedData } from '../../support/typed-data-oracle.js';
import { BASE_SEPOLIA_USDC as DOMAIN, openRawConnection, PAYEE, UPTO_PROXY } from './signer-test-helpers.js';

const PERMIT2 = '0x000000000022D473030F116dDEE9F6B43aC78BA3';

describe('treasury-signer: EIP-2612 permits to Permit2 only', function () {
  this.timeout(120_000);
  let signer: TestSigner;
  let params: (message: Record<string, string>) => Record<string, unknown>;
  let owner: string;

  before(async () => {
    signer = await startTestSigner({ env: { TREASURY_SIGNER_MAX_PER_SIGNATURE: '5000000' } });
    const account = (await signer.client.createAccountKey()).account_key_ref;
    const wallet = await signer.client.createWalletKey({ account_key_ref: account });
    owner = wallet.address;
    params = (message) => ({
      account_key_ref: account,
      wallet_key_ref: wallet.wallet_key_ref,
      address: wallet.address,
      domain: DOMAIN,
      message,
    });
  });
  after(async () => await signer?.stop());

  const permit = (overrides: Record<string, string> = {}) => ({
    owner,
    spender: PERMIT2,
    value: '50000',
    nonce: '0',
    deadline: String(Math.floor(Date.now() / 1000) + 600),
    ...overrides,
  });

  async function ask(message: Record<string, string>) {
    const conn = openRawConnection(signer.socketPath);
    try {
      return await conn.request({ v: 1, id: 'p', method: 'sign_eip2612_permit', params: params(message) });
    } finally {
      conn.close();
    }
  }

  it('signs a permit of the wallet to Permit2 that recovers to the wallet', async () => {
    const message = permit();
    const reply = await ask(message);
    assert.equal(reply.ok, true, JSON.stringify(reply));
    const recovered = await recoverTypedDataAddress({
      ...typedData(PERMIT, DOMAIN, message),
      signature: reply.result.signature,
    });
    assert.equal(recovered, owner);
  });

  it('refuses a permit to any spender but Permit2, with a structured rule', async () => {
    for (const spender of [UPTO_PROXY, PAYEE, owner, '0x0000000000000000000000000000000000000000']) {
      const reply = await ask(permit({ spender }));
      assert.equal(reply.ok, false, spender);
      assert.equal(reply.error.code, 'invariant_violation', spender);
      assert.equal(reply.error.details?.rule, 'permit_spender_permit2', spender);
    }
  });

  it('refuses another owner, a value past the per-signature maximum, an expired or overlong deadline', async () => {
    const now = Math.floor(Date.now() / 1000);
    const cases: [Record<string, string>, string][] = [
      [{ owner: PAYEE }, 'owner_is_wallet'],
      [{ value: '5000001' }, 'value_max'],
      [{ value: '0' }, 'value_positive'],
      [{ deadline: String(now - 1) }, 'window_open'],
      [{ deadline: String(now + 400 * 86_400) }, 'window_max'],
    ];
    for (const [overrides, rule] of cases) {
      const reply = await ask(permit(overrides));
      assert.equal(reply.ok, false, rule);
      assert.equal(reply.error.code, 'invariant_violation', rule);
      assert.equal(reply.error.details?.rule, rule);
    }
    const other = await ask(permit());
    assert.equal(other.ok, true);
  });

  it('refuses a token off the allow-list', async () => {
    const conn = openRawConnection(signer.socketPath);
    const p = params(permit());
    const reply = await conn.request({
      v: 1,
      id: 't',
      method: 'sign_eip2612_permit',
      params: { ...p, domain: { ...DOMAIN, verifyingContract: PAYEE } },
    });
    conn.close();
    assert.equal(reply.error?.code, 'invariant_violation');
    assert.equal(reply.error.details?.rule, 'allowed_token');
  });
});
