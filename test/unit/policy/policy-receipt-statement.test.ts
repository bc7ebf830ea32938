import { strict as assert } from 'node:assert';
import {
  buildPolicyReceiptStatement,
  parsePolicyReceiptStatement,
  type ReceiptFacts,
} from '../../../policy/policy-receipt-statement.js';

const WALLET = '0x52908400098527886E0F7030069857D2E4169EE7';
const held: ReceiptFacts = {
  wallet: WALLET,
  version: 3,
  policy_hash: `0x${'ab'.repeat(32)}`,
  issued_at: 1_700_000_000,
  authority: { kind: 'owner', address: '0x8617E340B3D01FA5F11F306F4090FD50E238070D' },
  signer_time: 1_700_000_100,
  nonce: 'cd'.repeat(32),
};
const none: ReceiptFacts = {
  ...held,
  version: null,
  policy_hash: null,
  issued_at: null,
  authority: { kind: 'approver', address: null },
};

describe('policy receipt statement (policy/policy-receipt-statement.ts)', () => {
  it('reads back exactly the facts it was built from', () => {
    for (const facts of [held, none, { ...none, authority: null }]) {
      assert.deepEqual(parsePolicyReceiptStatement(buildPolicyReceiptStatement(facts)), facts);
    }
  });

  it('keeps the issued text byte for byte', () => {
    assert.equal(
      buildPolicyReceiptStatement(held),
      [
        'Treasury signer policy receipt v1',
        `wallet: ${WALLET}`,
        'version: 3',
        `policy_hash: 0x${'ab'.repeat(32)}`,
        'issued_at: 1700000000',
        'authority: owner 0x8617E340B3D01FA5F11F306F4090FD50E238070D',
        'signer_time: 1700000100',
        `nonce: ${'cd'.repeat(32)}`,
      ].join('\n'),
    );
  });

  it('refuses a statement with a field changed or added', () => {
    const text = buildPolicyReceiptStatement(held);
    const lines = text.split('\n');
    const altered = [
      text.replace('version: 3', 'version: three'),
      text.replace('policy_hash: 0x', 'policy_hash: 0X'),
      text.replace('nonce: ', 'Nonce: '),
      text.replace('Treasury signer policy receipt v1', 'Treasury signer policy receipt v2'),
      text.replace('version: 3', 'version: none'),
      [...lines.slice(0, 7), 'URI: https://127.0.0.1', lines[7]].join('\n'),
      `${text}\nextra: 1`,
      `${text}\n`,
      lines.slice(0, 7).join('\n'),
    ];
    for (const t of altered) assert.equal(parsePolicyReceiptStatement(t), undefined, JSON.stringify(t));
  });
});
