/**
 * POSTs a JSON body to a URL and returns the status and the parsed JSON answer: for the sandbox services
 * (the facilitator) that the chain suites call directly. It throws on an answer that is not JSON. Also the
 * checks every successful facilitator /settle answer passes (assertSettledOnChain).
 */
import assert from 'node:assert/strict';
import type { Hex, TransactionReceipt } from 'viem';
import type { TestChain } from './chain-harness.js';

export async function postJson(url: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/**
 * A facilitator /settle answer that settled for `payer` on the sandbox chain (eip155:84532): 200, success,
 * its transaction hash (also as txHash) of a successful transaction sent by the facilitator. The receipt.
 */
export async function assertSettledOnChain(
  chain: Pick<TestChain, 'publicClient' | 'facilitatorAddress'>,
  settled: { status: number; body: Record<string, unknown> },
  payer: string,
): Promise<TransactionReceipt> {
  assert.equal(settled.status, 200);
  assert.equal(settled.body.success, true, JSON.stringify(settled.body));
  assert.equal(settled.body.network, 'eip155:84532');
  assert.equal(settled.body.payer, payer);
  assert.match(String(settled.body.transaction), /^0x[0-9a-f]{64}$/);
  assert.equal(settled.body.txHash, settled.body.transaction);
  const receipt = await chain.publicClient.getTransactionReceipt({ hash: settled.body.transaction as Hex });
  assert.equal(receipt.status, 'success');
  assert.equal(receipt.from.toLowerCase(), chain.facilitatorAddress.toLowerCase());
  return receipt;
}
