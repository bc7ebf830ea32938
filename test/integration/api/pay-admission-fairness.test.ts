/**
 * One account's flood of payments never fails another account's payment, through HTTP, the real signer (SoftHSM)
 * and PostgreSQL (src/api/pay/admission/): the signer's queue is shared by every tenant and answers `busy` when
 * full, so before the pay routes admitted payments per account a tenant holding more payments in flight than that
 * queue made every other tenant's payment fail 503 `signer_unavailable`. Now each account has at most
 * TREASURY_PAY_IN_FLIGHT_PER_ACCOUNT payments at work in a process and TREASURY_PAY_QUEUE_PER_ACCOUNT waiting;
 * past both its payments are refused 429 `pay_concurrency_exceeded` (Retry-After), and the process's whole
 * TREASURY_PAY_IN_FLIGHT stays below the signer's queue, free places going to waiting accounts in turn.
 */
import assert from 'node:assert/strict';
import { paymentRequirements } from '../../builders/payment-requirements.js';
import { useTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';

/** A fresh account's Treasury PAT and one wallet whose policy lets it pay as often as it likes. */
async function payingAccount(t: TestTreasury): Promise<{ pat: string; walletId: string }> {
  const me = await signInWithNewKey(t);
  const minted = await t.request('POST', '/v1/pats', { token: me.session, body: { scope_type: 'treasury' } });
  assert.equal(minted.status, 201, JSON.stringify(minted.body));
  const wallet = await t.request('POST', '/v1/wallets', {
    token: minted.body.pat,
    body: { policy: { per_tx_cap_usd: '1' } },
  });
  assert.equal(wallet.status, 201, JSON.stringify(wallet.body));
  return { pat: minted.body.pat as string, walletId: wallet.body.id as string };
}

const pay = (t: TestTreasury, a: { pat: string; walletId: string }) =>
  t.request('POST', `/v1/wallets/${a.walletId}/pay`, {
    token: a.pat,
    body: { payment_requirements: paymentRequirements({ amount: '10' }) },
  });

/**
 * `loops` requests made again and again by `call` while another tenant pays 16 times, one after another, once the
 * flood has answered `loops` requests: the other tenant's answers, and the flood's counted by status and code.
 */
async function paysDuringFlood(
  t: TestTreasury,
  loops: number,
  call: () => Promise<{ status: number; body: any }>,
  victim: { pat: string; walletId: string },
): Promise<{ answers: string[]; seen: Record<string, number> }> {
  const statuses = new Map<string, number>();
  const answerOf = (res: { status: number; body: any }) => `${res.status} ${res.body?.error_code ?? ''}`.trim();
  let flooding = true;
  const loop = async () => {
    while (flooding) {
      const key = answerOf(await call());
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
    }
  };
  const running = Array.from({ length: loops }, loop);
  const answers: string[] = [];
  try {
    while ([...statuses.values()].reduce((a, b) => a + b, 0) < loops) await new Promise((r) => setTimeout(r, 20));
    for (let i = 0; i < 16; i++) answers.push(answerOf(await pay(t, victim)));
  } finally {
    flooding = false;
    await Promise.all(running);
  }
  return { answers, seen: Object.fromEntries(statuses) };
}

/**
 * What the flooder may also get on a machine busy with other work: its own waiting calls past their wait bound
 * (TREASURY_PAY_QUEUE_WAIT_SECONDS, the signer calls' wait). Never the signer's own `busy` (503 signer_unavailable)
 * nor a 500.
 */
const OWN_WAIT_OVER = ['503 pay_overloaded', '503 signer_overloaded'];

describe('pay admission: one account cannot fail another (HTTP, SoftHSM signer, PostgreSQL)', function () {
  this.timeout(180_000);

  // One PKCS#11 session: the signer works on 4 requests at once and keeps 24 more waiting; past that, `busy`.
  const SIGNER_QUEUE = 24;
  const FLOOD = 160;
  const t = useTestTreasury({
    signerEnv: { TREASURY_PKCS11_SESSIONS: '1', TREASURY_SIGNER_MAX_QUEUE: String(SIGNER_QUEUE) },
    extraEnv: {
      TREASURY_PAY_IN_FLIGHT: '16',
      TREASURY_PAY_IN_FLIGHT_PER_ACCOUNT: '8',
      TREASURY_PAY_QUEUE_PER_ACCOUNT: '8',
      TREASURY_SIGNER_OTHER_IN_FLIGHT: '8',
    },
  });

  it("a tenant flooding the pay route gets 429 past its own share; another tenant's payments all pass", async () => {
    const flooder = await payingAccount(t);
    const victim = await payingAccount(t);
    const { answers, seen } = await paysDuringFlood(t, FLOOD, () => pay(t, flooder), victim);
    assert.deepEqual(answers, Array(16).fill('200'), `the other tenant's payments during the flood`);
    assert.ok((seen['200'] ?? 0) > 0, `the flooder's own payments pass within its share: ${JSON.stringify(seen)}`);
    assert.ok(
      (seen['429 pay_concurrency_exceeded'] ?? 0) > 0,
      `the flood's excess is refused: ${JSON.stringify(seen)}`,
    );
    assert.deepEqual(
      Object.keys(seen).filter((k) => !['200', '429 pay_concurrency_exceeded', ...OWN_WAIT_OVER].includes(k)),
      [],
      `no other answer: ${JSON.stringify(seen)}`,
    );
  });

  it("a tenant flooding the signer with reads of its wallet's policy never fails another tenant's payments", async () => {
    const flooder = await payingAccount(t);
    const victim = await payingAccount(t);
    const readPolicy = () => t.request('GET', `/v1/wallets/${flooder.walletId}/policy`, { token: flooder.pat });
    const { answers, seen } = await paysDuringFlood(t, FLOOD, readPolicy, victim);
    assert.deepEqual(answers, Array(16).fill('200'), `the other tenant's payments during the flood`);
    assert.ok((seen['200'] ?? 0) > 0, `the flooder's reads pass within its share: ${JSON.stringify(seen)}`);
    assert.deepEqual(
      Object.keys(seen).filter((k) => !['200', '429 signer_calls_exceeded', ...OWN_WAIT_OVER].includes(k)),
      [],
      `no other answer: ${JSON.stringify(seen)}`,
    );
  });
});
