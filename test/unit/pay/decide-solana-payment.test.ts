/**
 * The pure decision (src/api/pay/decide-payment.ts) for Solana wallets: a Solana `exact` plan reserves the
 * message it was built with, its SHA-256 as the authorization's nonce; a message built for another address
 * (the wallet's key rotated meanwhile) is refused before anything is written; a transfer (no message) is not
 * offered on Solana; an EVM payment on a Solana wallet is a network mismatch.
 */
import assert from 'node:assert/strict';
import { parseUsd } from '../../../policy/money.js';
import { ChainRegistry } from '../../../src/shared/chain-registry.js';
import { AppError } from '../../../src/api/errors/app-error.js';
import { decidePayment, type DecisionInput } from '../../../src/api/pay/decide-payment.js';
import type { PaySnapshot } from '../../../src/api/pay/pay-snapshot.js';
import type { SpendPlan } from '../../../src/api/pay/pay-types.js';
import type { SolanaPaymentAuthorization } from '../../../src/api/pay/payment-authorization.js';
import { EMPTY, NOW } from '../policy/policy-fixtures.js';

const chains = ChainRegistry.fromConfig(undefined, { solana: true });
const DEVNET = chains.resolveAny('solana-devnet')!;
const WALLET = 'BPFLoaderUpgradeab1e11111111111111111111111';
const PAYEE = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const FEE_PAYER = 'SysvarRent111111111111111111111111111111111';
const HASH = `0x${'5a'.repeat(32)}`;

const snapshot = (): PaySnapshot => ({
  wallet: {
    id: 'w_sol',
    account_id: 'acct_1',
    label: null,
    network: DEVNET.network,
    address: WALLET,
    public_key: `0x${'00'.repeat(32)}`,
    wallet_key_ref: 'p11:v1:ed25519:wk',
    key_version: 1,
    policy: {},
    status: 'active',
    created_at: NOW,
    updated_at: NOW,
    revoked_at: null,
    account_key_ref: 'ak_1',
  },
  state: { ...EMPTY },
  recent: null,
  auditHead: { seq: 3, hash: 'cd'.repeat(32) },
  previous: null,
});

const plan = (overrides: Partial<SpendPlan> = {}): SpendPlan => ({
  kind: 'pay',
  scheme: 'exact',
  chain: DEVNET,
  domain: undefined,
  to: PAYEE,
  amountMicro: parseUsd('0.01'),
  capability: undefined,
  resource: undefined,
  validForSeconds: 60,
  solana: { message: 'AAAA', messageHash: HASH, feePayer: FEE_PAYER, from: WALLET },
  ...overrides,
});

const input = (p: SpendPlan): DecisionInput => ({
  snapshot: snapshot(),
  plan: p,
  payer: { actor: 'pat_1', idempotencyKey: undefined, pat: undefined },
  requestHash: null,
  lockKey: '42',
  chains,
  now: NOW,
  mint: {
    id: (prefix) => `${prefix}1`,
    window: () => ({ validAfter: '1000', validBefore: '2000', nonce: `0x${'0'.repeat(64)}` }),
  },
});

const refusedWith = (code: string) => (err: unknown) => err instanceof AppError && err.code === code;

describe('pay wing: decidePayment on Solana', () => {
  it('reserves the built message unsigned, its hash as the nonce, the mint as the asset, no EIP-712 domain', () => {
    const decided = decidePayment(input(plan()));
    assert.equal(decided.outcome.kind, 'reserved');
    const outcome = decided.outcome as { payment: SolanaPaymentAuthorization; domain: unknown };
    assert.equal(outcome.domain, undefined);
    assert.deepEqual(outcome.payment.solana_transfer, {
      from: WALLET,
      to: PAYEE,
      amount: '10000',
      fee_payer: FEE_PAYER,
      message: 'AAAA',
      message_hash: HASH,
      valid_after: '1000',
      valid_before: '2000',
    });
    assert.equal(outcome.payment.transaction, '');
    const row = decided.write!.authorization!;
    assert.deepEqual(
      [row.nonce, row.from, row.to, row.asset, row.network, row.valueRaw],
      [HASH, WALLET, PAYEE, DEVNET.usdc, DEVNET.network, '10000'],
    );
  });

  it('refuses a message built for another address (the key rotated meanwhile): wallet_key_rotated', () => {
    const stale = plan({ solana: { message: 'AAAA', messageHash: HASH, feePayer: FEE_PAYER, from: PAYEE } });
    assert.throws(() => decidePayment(input(stale)), refusedWith('wallet_key_rotated'));
  });

  it('does not resume an earlier attempt reserved for an address that differs only in case (base58 is case-sensitive: another key)', () => {
    const first = decidePayment(input(plan())).outcome as { payment: SolanaPaymentAuthorization };
    const recased = `b${WALLET.slice(1)}`;
    const resumed: DecisionInput = {
      ...input(plan({ solana: { message: 'AAAA', messageHash: HASH, feePayer: FEE_PAYER, from: recased } })),
      requestHash: 'h',
      payer: { actor: 'pat_1', idempotencyKey: 'key-1', pat: undefined },
    };
    resumed.snapshot = {
      ...resumed.snapshot,
      wallet: { ...resumed.snapshot.wallet, address: recased },
      previous: { id: 'auth_old', status: 'reserved', request_hash: 'h', response: first.payment },
    };
    assert.throws(() => decidePayment(resumed), refusedWith('idempotency_key_conflict'));
  });

  it('a transfer from a Solana wallet is transfer_not_supported; an EVM chain asked of it, network_not_supported', () => {
    assert.throws(
      () => decidePayment(input(plan({ kind: 'transfer', chain: undefined, solana: undefined }))),
      refusedWith('transfer_not_supported'),
    );
    const sepolia = chains.resolve('base-sepolia')!;
    assert.throws(
      () => decidePayment(input(plan({ chain: sepolia, solana: undefined }))),
      refusedWith('network_not_supported'),
    );
  });
});
