/**
 * treasuryAccount as a viem account against a scripted Treasury whose pay endpoint signs the requested
 * authorization with a throwaway local key (so the signature can be checked with viem): EIP-3009 typed data
 * becomes the equivalent payment_requirements plus the caller's nonce and window; the signature verifies for
 * the typed data asked for; everything else — messages, transactions, other typed data, a look-alike struct,
 * a salted domain, another `from` — is refused before Treasury is called; a different authorization from
 * Treasury is withheld.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { getAddress, verifyTypedData, type TypedDataDefinition } from 'viem';
import {
  SignatureMismatchError,
  treasuryAccount,
  TreasuryClient,
  UnsupportedSignatureError,
  PatCapReachedError,
  InvalidArgumentError,
} from '../../../src/sdk/index.js';
import { BASE_SEPOLIA_USDC, buyer, SELLER } from '../x402/x402-fixtures.js';
import { fakeTreasuryHandler, scriptedServer, signedFor, WALLET_ID, type ScriptedHandler } from './scripted-http.js';
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from '../../../signer/eip3009/hash-transfer-authorization.js';

function transferWithAuthorization(
  overrides: Partial<{ from: `0x${string}`; validBefore: bigint; nonce: `0x${string}` }> = {},
) {
  return {
    domain: { name: 'USDC', version: '2', chainId: 84532, verifyingContract: getAddress(BASE_SEPOLIA_USDC) },
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization' as const,
    message: {
      from: overrides.from ?? buyer.address,
      to: SELLER,
      value: 10_000n,
      validAfter: 0n,
      validBefore: overrides.validBefore ?? BigInt(Math.floor(Date.now() / 1000) + 300),
      nonce: overrides.nonce ?? (`0x${randomBytes(32).toString('hex')}` as `0x${string}`),
    },
  };
}

/** Treasury's pay endpoint, played by a local key: signs exactly the terms requested (or `tamper`ed ones). */
const localSigningPay = (tamper: (a: Record<string, string>) => Record<string, string> = (a) => a): ScriptedHandler =>
  async function (req) {
    const { payment_requirements: r, authorization: t } = JSON.parse(req.body);
    const authorization = tamper({
      from: buyer.address,
      to: r.payTo,
      value: r.amount,
      validAfter: t.valid_after,
      validBefore: t.valid_before,
      nonce: t.nonce,
    });
    const signature = await buyer.signTypedData({
      domain: {
        name: r.extra.name,
        version: r.extra.version,
        chainId: Number(r.network.split(':')[1]),
        verifyingContract: r.asset,
      },
      types: TRANSFER_WITH_AUTHORIZATION_TYPES,
      primaryType: 'TransferWithAuthorization',
      message: {
        ...authorization,
        value: BigInt(authorization.value!),
        validAfter: BigInt(authorization.validAfter!),
        validBefore: BigInt(authorization.validBefore!),
      } as never,
    });
    return {
      status: 200,
      // Treasury's answer for `r` (./scripted-http.ts), with this authorization and its real signature.
      body: { ...signedFor(r), authorization, signature },
    };
  };

describe('buyer SDK: treasuryAccount (viem custom account)', () => {
  let treasury: Awaited<ReturnType<typeof scriptedServer>>;
  let tamper: ((a: Record<string, string>) => Record<string, string>) | undefined;
  beforeEach(async () => {
    tamper = undefined;
    treasury = await scriptedServer(async (req) =>
      req.url.endsWith('/pay') ? localSigningPay(tamper)(req) : fakeTreasuryHandler()(req),
    );
  });
  afterEach(async () => treasury.close());
  const account = () =>
    treasuryAccount({
      client: new TreasuryClient({ apiUrl: treasury.url, token: 'xx_pat_test' }),
      walletId: WALLET_ID,
      capability: 'weather.read',
    });
  const pays = () => treasury.requests.filter((r) => r.url.endsWith('/pay'));

  it("has the wallet's address (read from GET /v1/wallets/{id}) and signs EIP-3009 through the pay endpoint; the signature verifies", async () => {
    const acct = await account();
    assert.equal(acct.address, buyer.address);
    assert.equal(acct.type, 'local');
    const td = transferWithAuthorization();
    const signature = await acct.signTypedData(td);
    assert.equal(await verifyTypedData({ ...td, address: buyer.address, signature }), true);
    const body = JSON.parse(pays()[0]!.body);
    assert.deepEqual(body.payment_requirements, {
      scheme: 'exact',
      network: 'eip155:84532',
      payTo: SELLER,
      amount: '10000',
      asset: getAddress(BASE_SEPOLIA_USDC),
      extra: { name: 'USDC', version: '2' },
      maxTimeoutSeconds: body.payment_requirements.maxTimeoutSeconds,
    });
    assert.ok(body.payment_requirements.maxTimeoutSeconds >= 299 && body.payment_requirements.maxTimeoutSeconds <= 300);
    assert.deepEqual(body.authorization, {
      nonce: td.message.nonce,
      valid_after: '0',
      valid_before: td.message.validBefore.toString(),
    });
    assert.equal(body.capability, 'weather.read');
    // Each signature is asked for under an Idempotency-Key of its own (TreasuryClient retries with it).
    await acct.signTypedData(transferWithAuthorization());
    const keys = pays().map((p) => String(p.headers['idempotency-key']));
    assert.match(keys[0]!, /^account-[0-9a-f]{12}-[0-9a-f-]{36}$/);
    assert.ok(
      Math.abs(parseInt(keys[0]!.slice(8, 20), 16) - Date.now()) < 60_000,
      'the key starts with the time it was made',
    );
    assert.notEqual(keys[1], keys[0]);
  });

  it('refuses messages, transactions, other typed data and look-alikes before calling Treasury', async () => {
    const acct = await account();
    await assert.rejects(
      acct.signMessage({ message: 'hello' }),
      (err: unknown) => err instanceof UnsupportedSignatureError && /only EIP-3009/.test(err.message),
    );
    await assert.rejects(
      acct.signTransaction({
        to: SELLER,
        value: 1n,
        chainId: 84532,
        type: 'eip1559',
        maxFeePerGas: 1n,
        maxPriorityFeePerGas: 1n,
        gas: 21000n,
        nonce: 0,
      }),
      UnsupportedSignatureError,
    );
    const permit = {
      domain: { name: 'USDC', version: '2', chainId: 84532, verifyingContract: getAddress(BASE_SEPOLIA_USDC) },
      types: { Permit: [{ name: 'owner', type: 'address' }] },
      primaryType: 'Permit',
      message: { owner: buyer.address },
    } as const;
    await assert.rejects(acct.signTypedData(permit), /not Permit typed data/);
    const td = transferWithAuthorization();
    const lookAlikes: Array<[string, unknown]> = [
      [
        'struct with another field order',
        {
          ...td,
          types: {
            TransferWithAuthorization: [...TRANSFER_WITH_AUTHORIZATION_TYPES.TransferWithAuthorization].reverse(),
          },
        },
      ],
      [
        'struct with an extra field',
        {
          ...td,
          types: {
            TransferWithAuthorization: [
              ...TRANSFER_WITH_AUTHORIZATION_TYPES.TransferWithAuthorization,
              { name: 'memo', type: 'string' },
            ],
          },
        },
      ],
      ['salted domain', { ...td, domain: { ...td.domain, salt: `0x${'00'.repeat(32)}` } }],
      [
        'domain without version',
        { ...td, domain: { name: 'USDC', chainId: 84532, verifyingContract: td.domain.verifyingContract } },
      ],
      ['message with an extra key', { ...td, message: { ...td.message, memo: 'x' } }],
      ['negative value', { ...td, message: { ...td.message, value: -1n } }],
      ['short nonce', { ...td, message: { ...td.message, nonce: '0x1234' } }],
    ];
    for (const [what, typed] of lookAlikes)
      await assert.rejects(acct.signTypedData(typed as TypedDataDefinition), UnsupportedSignatureError, what);
    await assert.rejects(acct.signTypedData(transferWithAuthorization({ from: SELLER })), /not this wallet/);
    assert.equal(pays().length, 0);
  });

  it('withholds a signature for an authorization other than the one asked for', async () => {
    const acct = await account();
    tamper = (a) => ({ ...a, nonce: `0x${'ee'.repeat(32)}` });
    await assert.rejects(
      acct.signTypedData(transferWithAuthorization()),
      (err: unknown) =>
        err instanceof SignatureMismatchError && err.code === 'signature_mismatch' && /nonce/.test(err.message),
    );
    tamper = (a) => ({ ...a, validBefore: String(Number(a.validBefore) + 3600) });
    await assert.rejects(acct.signTypedData(transferWithAuthorization()), /validBefore/);
  });

  it("Treasury's refusals reach the viem caller as typed errors; bad options are refused", async () => {
    const acct = await account();
    treasury.handler = () => ({
      status: 429,
      body: {
        error_code: 'MGMT_6014',
        user_message: 'Cap.',
        recovery: { kind: 'raise_pat_cap', settings_url: 'https://dash/x' },
      },
    });
    await assert.rejects(
      acct.signTypedData(transferWithAuthorization()),
      (err: unknown) => err instanceof PatCapReachedError && err.settings_url === 'https://dash/x',
    );
    await assert.rejects(
      treasuryAccount({ client: new TreasuryClient({ apiUrl: treasury.url, token: 'xx_pat_test' }), walletId: 'x' }),
      InvalidArgumentError,
    );
  });
});
