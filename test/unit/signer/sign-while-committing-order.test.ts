/**
 * Which goes first when a payment is signed while its spend commits (signer/signer-service.ts): the store's batch
 * starts at the end of the turn in which the spend was asked for (signer/owner-policy/spend-batcher.ts), and a
 * signature the backend makes on the signer's main thread — when the signer holds no other request — holds that
 * thread. Such a signature is asked for after the batch started, so that the store commits while the HSM signs,
 * and the batch does not wait for it; with other requests held, it is asked for at once and the batch may gather
 * until it is made. Either way the signature leaves only once the spend committed. The store here is in memory
 * behind the real OwnerPolicies; its batch start is scheduled as the batcher schedules it.
 */
import assert from 'node:assert/strict';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import type { KeyBackend } from '../../../signer/backends/key-backend.js';
import { publicKeyToAddress } from '../../../signer/ecdsa/public-key-to-address.js';
import { OwnerPolicies } from '../../../signer/owner-policy/owner-policies.js';
import type { OwnerPolicyStore, ReservedSpend } from '../../../signer/owner-policy/owner-policy-store.js';
import { SignerService } from '../../../signer/signer-service.js';
import { SignerFault } from '../../../signer/signer-error.js';
import {
  TEST_PAYEE,
  testSignerInvariants,
  transferAuthorizationRequest,
} from '../../support/signer-service-fixtures.js';

/** A signer service over one in-memory key and an in-memory store whose spends commit when the test says. */
function setUp() {
  const secret = secp256k1.utils.randomSecretKey();
  const address = publicKeyToAddress(secp256k1.getPublicKey(secret, false));
  const events: string[] = [];
  let commit!: (spend: ReservedSpend<unknown>) => void;
  const waitedFor: Promise<unknown>[] = [];
  const backend = {
    kind: 'pkcs11' as const,
    signDigest: async (_account: string, _ref: string, digest: Uint8Array) => {
      events.push('signature asked');
      return secp256k1.sign(digest, secret, { prehash: false });
    },
    isDestroyed: () => false,
    walletKeyId: (ref: string) => ref,
  };
  const store = {
    wallet: async () => ({
      authority: { kind: 'owner', address: TEST_PAYEE },
      current: { policy: { daily_cap_usd: '10' }, version: 1, policyHash: '0x00', issuedAt: 1, signature: '0x00' },
      underAccount: true,
    }),
    reserveSpend: () => {
      // The batcher starts a batch at the end of the turn in which its first spend was asked for.
      setImmediate(() => events.push('commit started'));
      return {
        foreseen: true,
        outcome: new Promise<ReservedSpend<unknown>>((resolve) => (commit = resolve)),
        waitFor: (signing: Promise<unknown>) => void waitedFor.push(signing),
      };
    },
    giveBack: async () => undefined,
  };
  const service = new SignerService({
    backend: backend as unknown as KeyBackend,
    invariants: testSignerInvariants(),
    ownerPolicies: new OwnerPolicies({ store: store as unknown as OwnerPolicyStore, approver: null }),
  });
  const wallet = { accountKeyRef: 'p11:v1:acct:test', walletKeyRef: 'p11:v1:wal:a', address };
  const pay = (alone: boolean) => service.handle(transferAuthorizationRequest(wallet, 1), { alone: () => alone });
  return { events, waitedFor, pay, commit: (spend: ReservedSpend<unknown>) => commit(spend) };
}

/**
 * Lets the turns in which the batch starts and the signature is asked for run: until both happened (a signature
 * made on this thread may hold it past a timer's delay on a busy machine), within a bound.
 */
async function turns(events: readonly string[]): Promise<void> {
  const until = Date.now() + 10_000;
  while (events.length < 2 && Date.now() < until) await new Promise<void>((resolve) => setTimeout(resolve, 1));
}

describe('a payment signed while its spend commits: the commit and the signature, in order', () => {
  it('alone, the batch starts first and does not wait for the signature, which leaves after the commit', async () => {
    const { events, waitedFor, pay, commit } = setUp();
    let settled = false;
    const paying = pay(true).finally(() => (settled = true));
    await turns(events);
    assert.deepEqual(events, ['commit started', 'signature asked']);
    assert.equal(waitedFor.length, 0, 'the batch is not held for a signature that holds the thread');
    assert.equal(settled, false, 'nothing leaves before the spend committed');
    commit({ kind: 'recorded', id: 'spend-1', signed: true });
    const result = (await paying) as { signature: string };
    assert.match(result.signature, /^0x[0-9a-f]{130}$/);
  });

  it('with other requests held, the signature is asked for at once and the batch may gather until it is made', async () => {
    const { events, waitedFor, pay, commit } = setUp();
    const paying = pay(false);
    await turns(events);
    assert.deepEqual(events, ['signature asked', 'commit started']);
    assert.equal(waitedFor.length, 1);
    commit({ kind: 'recorded', id: 'spend-1', signed: true });
    assert.match(((await paying) as { signature: string }).signature, /^0x[0-9a-f]{130}$/);
  });

  it('alone, a spend the commit refuses lets no signature out', async () => {
    const { events, pay, commit } = setUp();
    const paying = pay(true);
    await turns(events);
    commit({ kind: 'refused', refusal: { violations: [{ rule: 'daily_cap', message: 'over' }], version: 1 } });
    await assert.rejects(paying, (e: unknown) => e instanceof SignerFault && e.code === 'policy_denied');
  });
});
