/**
 * The two EIP-712 forms of the owner-signed policy document (policy/signed-policy.ts): `policy_hash` (domain version
 * "1", the policy's hash) and `policy_text` (domain version "2", the policy's canonical JSON as a string). The text
 * form's `policy` field is exactly the bytes `policyDocumentHash` hashes, so its EIP-712 encoding is that hash and the
 * two structs differ by their type hash only; the digests differ, so a signature recovers to its signer under its own
 * form only. The `eth_signTypedData_v4` shape of each form; the `form` field of the signature fields, strict.
 */
import assert from 'node:assert/strict';
import {
  encodeAbiParameters,
  hashStruct,
  hashTypedData,
  keccak256,
  parseAbiParameters,
  recoverTypedDataAddress,
  stringToBytes,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { canonicalJson } from '../../../base/canonical-json.js';
import { normalizePolicy } from '../../../policy/normalize-policy.js';
import { walletPolicySchema } from '../../../policy/policy-schema.js';
import {
  policyDocumentHash,
  policyDocumentText,
  policySignatureFieldsSchema,
  policyTextTypedData,
  policyTypedData,
  policyTypedDataOf,
  policyTypedDataV4,
} from '../../../policy/signed-policy.js';

const WALLET = '0x209693bc6afc0c5328ba36faf03c514ef312287c';
const policy = walletPolicySchema.parse({
  per_tx_cap_usd: '1.50',
  daily_cap_usd: '10',
  counterparty_allowlist: ['0x857b06519E91e3A54538791bDbb0E22373e36b66'],
});
const input = { wallet: WALLET, policy, version: 3, issuedAt: 1_795_903_200 };

/** EIP-712 `encodeData` hashed by hand: the type hash, then each field as the struct encodes it. */
function structHash(typeString: string, policyField: `0x${string}`) {
  return keccak256(
    encodeAbiParameters(parseAbiParameters('bytes32, bytes32, bytes32, uint64, uint64'), [
      keccak256(stringToBytes(typeString)),
      keccak256(stringToBytes('0x209693Bc6afc0C5328bA36FaF03C514EF312287C')),
      policyField,
      3n,
      1_795_903_200n,
    ]),
  );
}

describe('the owner-signed policy document: its hash and text forms (unit)', () => {
  it("spells out the policy's canonical JSON, whose EIP-712 encoding is policyDocumentHash: the structs differ by type hash only", () => {
    const text = policyTextTypedData(input);
    assert.equal(text.message.policy, canonicalJson(normalizePolicy(policy)));
    assert.equal(text.message.policy, policyDocumentText(policy));
    assert.equal(keccak256(stringToBytes(text.message.policy)), policyDocumentHash(policy));
    const hashed = policyTypedData(input);
    assert.equal(
      hashStruct({ data: text.message, primaryType: 'WalletPolicy', types: text.types }),
      structHash(
        'WalletPolicy(string wallet,string policy,uint64 version,uint64 issuedAt)',
        policyDocumentHash(policy),
      ),
    );
    assert.equal(
      hashStruct({ data: hashed.message, primaryType: 'WalletPolicy', types: hashed.types }),
      structHash(
        'WalletPolicy(string wallet,bytes32 policyHash,uint64 version,uint64 issuedAt)',
        hashed.message.policyHash,
      ),
    );
    assert.deepEqual(text.domain, { name: 'Treasury wallet policy', version: '2' });
    assert.deepEqual(hashed.domain, { name: 'Treasury wallet policy', version: '1' });
  });

  it('gives the two forms different digests: a signature recovers to its signer under its own form only', async () => {
    assert.notEqual(hashTypedData(policyTypedData(input)), hashTypedData(policyTextTypedData(input)));
    const owner = privateKeyToAccount(generatePrivateKey());
    const signature = await owner.signTypedData(policyTextTypedData(input));
    assert.equal(await recoverTypedDataAddress({ ...policyTextTypedData(input), signature }), owner.address);
    assert.notEqual(await recoverTypedDataAddress({ ...policyTypedData(input), signature }), owner.address);
    // Another policy spelled out is another document.
    const other = { ...input, policy: walletPolicySchema.parse({ per_tx_cap_usd: '2' }) };
    assert.notEqual(await recoverTypedDataAddress({ ...policyTextTypedData(other), signature }), owner.address);
  });

  it('names each form by its field: absent is the hash form, as every earlier document', () => {
    assert.deepEqual(policyTypedDataOf(undefined, input), policyTypedData(input));
    assert.deepEqual(policyTypedDataOf('policy_hash', input), policyTypedData(input));
    assert.deepEqual(policyTypedDataOf('policy_text', input), policyTextTypedData(input));
  });

  it('gives eth_signTypedData_v4 JSON of either form: the domain type spelled out, integers as decimal strings', () => {
    const domainType = [
      { name: 'name', type: 'string' },
      { name: 'version', type: 'string' },
    ];
    const text = JSON.parse(JSON.stringify(policyTypedDataV4(input, 'policy_text')));
    assert.deepEqual(text, {
      domain: { name: 'Treasury wallet policy', version: '2' },
      types: {
        EIP712Domain: domainType,
        WalletPolicy: [
          { name: 'wallet', type: 'string' },
          { name: 'policy', type: 'string' },
          { name: 'version', type: 'uint64' },
          { name: 'issuedAt', type: 'uint64' },
        ],
      },
      primaryType: 'WalletPolicy',
      message: {
        wallet: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
        policy: canonicalJson(normalizePolicy(policy)),
        version: '3',
        issuedAt: '1795903200',
      },
    });
    const hashed = JSON.parse(JSON.stringify(policyTypedDataV4(input)));
    assert.deepEqual(hashed.domain, { name: 'Treasury wallet policy', version: '1' });
    assert.equal(hashed.message.policyHash, policyDocumentHash(policy));
    assert.equal(hashed.message.policy, undefined);
  });

  it('takes only the two forms, or none, beside a signature', () => {
    const fields = { version: 1, issued_at: 1, signature: `0x${'ab'.repeat(65)}` };
    for (const form of [undefined, 'policy_hash', 'policy_text'])
      assert.ok(policySignatureFieldsSchema.safeParse({ ...fields, form }).success, String(form));
    for (const form of ['POLICY_TEXT', 'policy', '', null, 2, ['policy_text']])
      assert.equal(policySignatureFieldsSchema.safeParse({ ...fields, form }).success, false, JSON.stringify(form));
  });
});
