/**
 * A wallet's policy is parsed once per snapshot read, not once per payment (src/api/pay/snapshot-policy.ts),
 * through HTTP with the real signer and PostgreSQL: the snapshot the pay path reads holds its policy frozen, every
 * payment decided on it (remembered after each write) evaluates one parsed form, and what the rules decide is
 * unchanged — a blocked counterparty is still refused between allowed payments, and a policy changed through the
 * API is decided on at once, never on the parsed form of the policy it replaced.
 */
import assert from 'node:assert/strict';
import { parsePolicy } from '../../../policy/parse-policy.js';
import { snapshotAfter } from '../../../src/api/pay/pay-snapshot.js';
import { parsedPolicyOf } from '../../../src/api/pay/snapshot-policy.js';
import { PgPaySnapshotStore } from '../../../src/api/pay/store/pg-pay-stores.js';
import { mintAgentKey, startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { paymentRequirements } from '../../builders/payment-requirements.js';

const SELLER = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
const OTHER = '0x857b06519E91e3A54538791bDbb0E22373e36b66';

/** A policy with lists and caps to parse: SELLER allowed, OTHER allowed (or, `otherBlocked`, blocked), 40 caps. */
const policy = (otherBlocked = false) => ({
  per_tx_cap_usd: '1',
  counterparty_allowlist: [
    SELLER,
    ...(otherBlocked ? [] : [OTHER]),
    ...Array.from({ length: 30 }, (_, i) => `0x${String(i + 1).padStart(40, '0')}`),
  ],
  counterparty_blocklist: otherBlocked ? [OTHER] : [],
  capability_cap_usd: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`cap.${i}`, '0.5'])),
});

describe('pay path: a policy parsed once per snapshot read (HTTP, SoftHSM, PostgreSQL)', function () {
  this.timeout(180_000);
  let t: TestTreasury;
  let token: string;

  before(async () => {
    t = await startTestTreasury();
    token = await mintAgentKey(t, 'payer');
  });
  after(async () => {
    await t?.stop();
  });

  const pay = (walletId: string, payTo: string, capability = 'cap.7') =>
    t.request('POST', `/v1/wallets/${walletId}/pay`, {
      token,
      body: {
        payment_requirements: paymentRequirements({ amount: '10000', payTo, maxTimeoutSeconds: 300 }),
        capability,
      },
    });

  it('reads the policy frozen, and every snapshot remembered from it shares one parsed form', async () => {
    const made = await t.request('POST', '/v1/wallets', { token, body: { policy: policy() } });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const walletId = made.body.id as string;

    const snapshot = await new PgPaySnapshotStore(t.db.knex).read(walletId, new Date(), undefined, 'pay');
    assert.ok(snapshot);
    const read = snapshot.wallet.policy as { counterparty_allowlist: string[]; capability_cap_usd: object };
    assert.ok(Object.isFrozen(read), 'the policy object is frozen as read');
    assert.ok(Object.isFrozen(read.counterparty_allowlist), 'and its lists');
    assert.ok(Object.isFrozen(read.capability_cap_usd), 'and its caps');
    assert.throws(() => read.counterparty_allowlist.push(OTHER), TypeError);

    // As the pay path remembers it after each write: a new snapshot object, the same policy, one parsed form.
    const remembered = snapshotAfter(snapshot, {
      auditHead: { seq: 99, hash: 'ab'.repeat(32) },
      spentMicro: 1n,
      at: new Date(),
    });
    const once = parsedPolicyOf(snapshot.wallet.policy);
    assert.equal(
      parsedPolicyOf(remembered.wallet.policy),
      once,
      'the remembered snapshot decides on the same parsed form',
    );
    assert.equal(parsedPolicyOf(snapshot.wallet.policy), once);
    assert.deepEqual(once, parsePolicy(structuredClone(snapshot.wallet.policy)), 'what parsePolicy makes of it');

    // A policy object not read by the pay path (a copy) is parsed anew each time, never from memory.
    const copy = structuredClone(snapshot.wallet.policy);
    assert.notEqual(parsedPolicyOf(copy), parsedPolicyOf(copy));
  });

  it('decides as before on the remembered snapshots, and on a changed policy at once', async () => {
    const made = await t.request('POST', '/v1/wallets', { token, body: { policy: policy() } });
    const walletId = made.body.id as string;

    assert.equal((await pay(walletId, SELLER)).status, 200);
    assert.equal((await pay(walletId, OTHER)).status, 200);
    const capped = await pay(walletId, SELLER, 'cap.unlisted.but.allowed');
    assert.equal(capped.status, 200, JSON.stringify(capped.body));

    // OTHER blocked: the wallet's remembered snapshot is forgotten with the change, and the new policy decides.
    const changed = await t.request('PUT', `/v1/wallets/${walletId}/policy`, { token, body: policy(true) });
    assert.equal(changed.status, 200, JSON.stringify(changed.body));
    const refused = await pay(walletId, OTHER);
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.ok(refused.body.rules.includes('counterparty_blocklist'), JSON.stringify(refused.body.rules));
    assert.equal((await pay(walletId, SELLER)).status, 200, 'the allowed counterparty still pays');
    assert.equal(
      (await pay(walletId, OTHER)).status,
      403,
      'and the blocked one stays refused on the remembered snapshot',
    );
  });
});
