/**
 * The CLI's reading of a signer policy receipt (src/cli/commands/account/policy-receipt-check.ts), on receipts signed
 * here with a viem key standing in for the wallet's: the eight lines read strictly (any other text, order, spelling or
 * an unbounded number is no receipt), the signature must recover to the wallet address given, the nonce must be the
 * one sent, and the comparison with the expected document says in_force, withheld or mismatch.
 */
import assert from 'node:assert/strict';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  parseReceiptStatement,
  receiptStatus,
  verifyReceipt,
} from '../../../src/cli/commands/account/policy-receipt-check.js';
import { CliError } from '../../../src/cli/core/cli-error.js';

const wallet = privateKeyToAccount(generatePrivateKey());
const NONCE = 'ab'.repeat(32);
const HASH = `0x${'cd'.repeat(32)}`;

function statement(over: Partial<Record<string, string>> = {}): string {
  const fields: Record<string, string> = {
    wallet: wallet.address,
    version: '3',
    policy_hash: HASH,
    issued_at: '1700000000',
    authority: `owner ${wallet.address}`,
    signer_time: '1700000100',
    nonce: NONCE,
    ...over,
  };
  return ['Treasury signer policy receipt v1', ...Object.entries(fields).map(([k, v]) => `${k}: ${v}`)].join('\n');
}

async function reason(run: Promise<unknown>): Promise<string> {
  try {
    await run;
  } catch (err) {
    assert.ok(err instanceof CliError);
    assert.equal(err.code, 'policy_receipt_invalid');
    return (err.details as { reason: string }).reason;
  }
  assert.fail('the receipt verified');
}

describe('xx wallet policy verify: reading a receipt', () => {
  it('reads the eight lines of a receipt', () => {
    assert.deepEqual(parseReceiptStatement(statement()), {
      wallet: wallet.address,
      version: 3,
      policy_hash: HASH,
      issued_at: 1700000000,
      authority: { kind: 'owner', address: wallet.address },
      signer_time: 1700000100,
      nonce: NONCE,
    });
    const none = parseReceiptStatement(
      statement({ version: 'none', policy_hash: 'none', issued_at: 'none', authority: 'approver none' }),
    );
    assert.deepEqual(
      [none?.version, none?.policy_hash, none?.authority],
      [null, null, { kind: 'approver', address: null }],
    );
  });

  it('reads nothing else as one', () => {
    const good = statement();
    for (const text of [
      good.replace('Treasury signer policy receipt v1', 'Treasury signer policy receipt v2'),
      `${good}\n`,
      good.replaceAll('\n', '\r\n'),
      good.replace('version: 3', 'Version: 3'),
      good.replace('version: 3', 'version:  3'),
      good.replace('version: 3', 'version: 03'),
      good.replace('version: 3', `version: ${2 ** 48 + 1}`),
      good.replace('version: 3', 'version: none'),
      good.replace(`nonce: ${NONCE}`, `nonce: ${NONCE.toUpperCase()}`),
      good.replace('authority: owner', 'authority: admin'),
      good.replace('signer_time: 1700000100', 'signer_time: none'),
      statement({ wallet: 'vitalik.eth' }),
      [good.split('\n')[0], ...good.split('\n').slice(1).reverse()].join('\n'),
      `example.com wants you to sign in with your Ethereum account:\n${good}`,
    ])
      assert.equal(parseReceiptStatement(text), undefined, JSON.stringify(text));
  });

  it('verifies the signature against the address given, then the wallet and the nonce', async () => {
    const text = statement();
    const signature = await wallet.signMessage({ message: text });
    const facts = await verifyReceipt({ statement: text, signature }, wallet.address.toLowerCase(), NONCE);
    assert.equal(facts.version, 3);
    const other = privateKeyToAccount(generatePrivateKey());
    assert.equal(await reason(verifyReceipt({ statement: text, signature }, other.address, NONCE)), 'signature');
    const edited = text.replace('version: 3', 'version: 4');
    assert.equal(await reason(verifyReceipt({ statement: edited, signature }, wallet.address, NONCE)), 'signature');
    assert.equal(await reason(verifyReceipt({ statement: text, signature }, wallet.address, 'ef'.repeat(32))), 'nonce');
    const elsewhere = statement({ wallet: other.address });
    const signedElsewhere = await wallet.signMessage({ message: elsewhere });
    assert.equal(
      await reason(verifyReceipt({ statement: elsewhere, signature: signedElsewhere }, wallet.address, NONCE)),
      'wallet',
    );
    const junk = 'hello';
    const signedJunk = await wallet.signMessage({ message: junk });
    assert.equal(
      await reason(verifyReceipt({ statement: junk, signature: signedJunk }, wallet.address, NONCE)),
      'statement',
    );
    assert.equal(
      await reason(verifyReceipt({ statement: text, signature: '0x00' }, wallet.address, NONCE)),
      'signature',
    );
  });

  it('compares what the signer holds with the document expected', () => {
    const facts = parseReceiptStatement(statement())!;
    assert.equal(receiptStatus(facts, { version: 3, policy_hash: HASH.toUpperCase().replace('0X', '0x') }), 'in_force');
    assert.equal(receiptStatus(facts, { version: 4, policy_hash: HASH }), 'withheld');
    assert.equal(receiptStatus(facts, { version: 3, policy_hash: `0x${'ee'.repeat(32)}` }), 'mismatch');
    assert.equal(receiptStatus(facts, { version: 2, policy_hash: HASH }), 'mismatch');
    assert.equal(receiptStatus(facts, { version: null, policy_hash: null }), 'mismatch');
    const none = parseReceiptStatement(statement({ version: 'none', policy_hash: 'none', issued_at: 'none' }))!;
    assert.equal(receiptStatus(none, { version: 1, policy_hash: HASH }), 'withheld');
    assert.equal(receiptStatus(none, { version: null, policy_hash: null }), 'in_force');
  });
});
