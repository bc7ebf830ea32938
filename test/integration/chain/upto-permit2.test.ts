/**
 * The x402 `upto` scheme (Permit2 witness transfers) on the sandbox chain, end to end with the official
 * packages: Permit2 sits at its canonical address with the EIP-712 domain x402 clients sign for; our
 * x402UptoPermit2Proxy stand-in matches the official ABI and witness types; the faucet's
 * `approve_permit2` gives a fresh account the max allowance; a payload built by the official upto client
 * verifies at the maximum and settles for less (exactly that amount moves); a replay fails (Permit2's
 * nonce is used); settling above the maximum is refused; a payload bound to another facilitator, an
 * account without the Permit2 allowance and direct proxy calls that break the witness rules are refused
 * with the official reasons / the proxy's errors.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { x402Client } from '@x402/core/client';
import { HTTPFacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { uptoPermit2WitnessTypes, x402UptoPermit2ProxyABI } from '@x402/evm';
import { UptoEvmScheme } from '@x402/evm/upto/client';
import {
  BaseError,
  ContractFunctionRevertedError,
  domainSeparator,
  keccak256,
  maxUint256,
  parseAbi,
  toFunctionSignature,
  toHex,
  type Abi,
  type AbiFunction,
  type Address,
  type Hex,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import {
  collectUptoContractSources,
  compileUptoContracts,
  compileUptoContractSources,
} from '../../../ops/sandbox/chain/compile-upto-contracts.js';
import { testUsdcAbi } from '../../../ops/sandbox/chain/deploy-test-usdc.js';
import {
  MULTICALL3,
  PERMIT2,
  permit2Abi,
  X402_UPTO_PERMIT2_PROXY,
} from '../../../ops/sandbox/chain/deploy-upto-contracts.js';
import {
  anvilDevAccount,
  fundFromFaucet,
  onlyCacheFile,
  readTokenBalance,
  useTestChain,
} from '../../support/chain-harness.js';
import { assertSettledOnChain, postJson } from '../../support/post-json.js';
import type { Permit2Authorization } from '../../../src/api/pay/payment-authorization.js';

/** The custom error name of a reverted viem call (undefined when it did not revert with one). */
async function revertName(call: Promise<unknown>): Promise<string | undefined> {
  try {
    await call;
  } catch (err) {
    const reverted = err instanceof BaseError ? err.walk((e) => e instanceof ContractFunctionRevertedError) : undefined;
    return reverted instanceof ContractFunctionRevertedError
      ? reverted.data?.errorName
      : `not a custom error: ${String(err)}`;
  }
  return undefined;
}

const ABI_KEYS = [
  'anonymous',
  'components',
  'indexed',
  'inputs',
  'internalType',
  'name',
  'outputs',
  'stateMutability',
  'type',
];

/** ABI entries as comparable strings (every key, nested too, in one fixed order), sorted. */
function abiSignatures(abi: Abi): string[] {
  return abi.map((entry) => JSON.stringify(entry, ABI_KEYS)).sort();
}

/** The proxy's ABI plus the Permit2 errors a settle call can bubble up. */
const proxyWithPermit2Errors = [
  ...x402UptoPermit2ProxyABI,
  ...parseAbi([
    'error InvalidSigner()',
    'error InvalidSignature()',
    'error InvalidNonce()',
    'error SignatureExpired(uint256 signatureDeadline)',
    'error InvalidAmount(uint256 maxAmount)',
  ]),
] as const;

describe('x402 upto (Permit2 witness) on the sandbox chain', function () {
  this.timeout(60_000);
  const chain = useTestChain();
  let buyer: PrivateKeyAccount;
  let unapproved: PrivateKeyAccount;
  const payTo = anvilDevAccount(7).address;

  const requirements = (
    overrides: Partial<PaymentRequirements> = {},
    extra: Record<string, unknown> = {},
  ): PaymentRequirements => ({
    scheme: 'upto',
    network: 'eip155:84532',
    amount: '100000',
    asset: chain.usdc,
    payTo,
    maxTimeoutSeconds: 300,
    extra: {
      name: 'USDC',
      version: '2',
      facilitatorAddress: chain.facilitatorAddress,
      assetTransferMethod: 'permit2',
      ...extra,
    },
    ...overrides,
  });
  const paymentRequired = (accepts: PaymentRequirements): PaymentRequired => ({
    x402Version: 2,
    resource: { url: 'http://127.0.0.1/metered', description: 'sandbox upto resource', mimeType: 'application/json' },
    accepts: [accepts],
  });
  const pay = (account: PrivateKeyAccount, accepts: PaymentRequirements) =>
    new x402Client()
      .register('eip155:84532', new UptoEvmScheme(account))
      .createPaymentPayload(paymentRequired(accepts));
  const body = (paymentPayload: PaymentPayload, paymentRequirements: PaymentRequirements) => ({
    x402Version: 2,
    paymentPayload,
    paymentRequirements,
  });
  const authorizationOf = (payload: PaymentPayload) =>
    (payload.payload as { permit2Authorization: Permit2Authorization }).permit2Authorization;
  const settleArgsOf = (payload: PaymentPayload) => {
    const auth = authorizationOf(payload);
    return {
      permit: {
        permitted: { token: auth.permitted.token as Address, amount: BigInt(auth.permitted.amount) },
        nonce: BigInt(auth.nonce),
        deadline: BigInt(auth.deadline),
      },
      owner: auth.from as Address,
      witness: {
        to: auth.witness.to as Address,
        facilitator: auth.witness.facilitator as Address,
        validAfter: BigInt(auth.witness.validAfter),
      },
      signature: (payload.payload as { signature: Hex }).signature,
    };
  };
  /** eth_call of the proxy's settle with the payload's signed terms, some of them overridden. */
  const simulateSettle = (
    payload: PaymentPayload,
    o: { account: Address; amount: bigint; owner?: Address; witness?: ReturnType<typeof settleArgsOf>['witness'] },
  ) => {
    const args = settleArgsOf(payload);
    return chain.publicClient.simulateContract({
      account: o.account,
      address: X402_UPTO_PERMIT2_PROXY,
      abi: proxyWithPermit2Errors,
      functionName: 'settle',
      args: [args.permit, o.amount, o.owner ?? args.owner, o.witness ?? args.witness, args.signature],
    });
  };

  before(async () => {
    buyer = privateKeyToAccount(generatePrivateKey());
    unapproved = privateKeyToAccount(generatePrivateKey());
    await fundFromFaucet(chain, buyer.address, '5', { approvePermit2: true });
    await fundFromFaucet(chain, unapproved.address, '5');
  });

  it('Permit2 is at its canonical address and its DOMAIN_SEPARATOR is the domain x402 clients sign for', async () => {
    assert.equal(chain.permit2, PERMIT2);
    assert.equal(PERMIT2, '0x000000000022D473030F116dDEE9F6B43aC78BA3');
    const onChain = await chain.publicClient.readContract({
      address: PERMIT2,
      abi: permit2Abi,
      functionName: 'DOMAIN_SEPARATOR',
    });
    assert.equal(onChain, domainSeparator({ domain: { name: 'Permit2', chainId: 84532, verifyingContract: PERMIT2 } }));
    assert.equal(await chain.publicClient.getChainId(), 84532, 'the chain id is back to 84532 after the deployment');
    assert.ok(
      ((await chain.publicClient.getCode({ address: MULTICALL3 })) ?? '0x').length > 2,
      'Multicall3 stand-in is placed',
    );
  });

  it('the proxy stand-in implements the official ABI, Permit2 address and witness types', async () => {
    assert.equal(chain.uptoProxy, X402_UPTO_PERMIT2_PROXY);
    assert.equal(X402_UPTO_PERMIT2_PROXY, '0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002');
    const compiled = compileUptoContracts().contracts.uptoProxy.abi;
    assert.deepEqual(abiSignatures(compiled), abiSignatures(x402UptoPermit2ProxyABI as unknown as Abi));

    const read = <F extends 'PERMIT2' | 'WITNESS_TYPEHASH' | 'WITNESS_TYPE_STRING'>(functionName: F) =>
      chain.publicClient.readContract({ address: X402_UPTO_PERMIT2_PROXY, abi: x402UptoPermit2ProxyABI, functionName });
    // The witness struct as the official client signs it, in EIP-712 encodeType form.
    const struct = (name: 'Witness' | 'TokenPermissions') =>
      `${name}(${uptoPermit2WitnessTypes[name].map((f) => `${f.type} ${f.name}`).join(',')})`;
    assert.equal(await read('PERMIT2'), PERMIT2);
    assert.equal(await read('WITNESS_TYPEHASH'), keccak256(toHex(struct('Witness'))));
    assert.equal(
      await read('WITNESS_TYPE_STRING'),
      `Witness witness)${struct('TokenPermissions')}${struct('Witness')}`,
    );
  });

  it('compiles Permit2 from the npm package (pragma relaxed only), caches by source hash and seeds a fresh cache directory', () => {
    const sources = collectUptoContractSources();
    assert.ok(
      [
        'permit2/src/Permit2.sol',
        'permit2/src/SignatureTransfer.sol',
        'solmate/src/tokens/ERC20.sol',
        'solmate/src/utils/SafeTransferLib.sol',
        'sandbox/X402UptoPermit2Proxy.sol',
      ].every((u) => u in sources),
      Object.keys(sources).join(', '),
    );
    assert.ok(Object.keys(sources).every((u) => /^(permit2|solmate|sandbox)\//.test(u)));
    assert.match(sources['permit2/src/Permit2.sol']!, /^pragma solidity \^0\.8\.17;$/m);
    assert.doesNotMatch(Object.values(sources).join('\n'), /^pragma solidity 0\.8\.17;$/m);

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'upto-contracts-cache-'));
    try {
      // The harness has filled the repository cache: a fresh directory is seeded from it, no compile.
      const first = compileUptoContracts({ cacheDir: dir });
      const cached = onlyCacheFile(dir, /^upto-contracts-[0-9a-f]{16}\.json$/);
      assert.ok(first.cacheKey.startsWith(cached.name.slice('upto-contracts-'.length, -'.json'.length)));
      assert.equal(first.contracts.permit2.hasImmutables, true);
      const compiledPermit2 = new Set(
        first.contracts.permit2.abi
          .filter((e): e is AbiFunction => e.type === 'function')
          .map((f) => toFunctionSignature(f)),
      );
      for (const f of permit2Abi) assert.ok(compiledPermit2.has(toFunctionSignature(f)), toFunctionSignature(f));
      assert.equal(first.contracts.uptoProxy.hasImmutables, false);
      const mtime = cached.mtimeMs();
      assert.deepEqual(compileUptoContracts({ cacheDir: dir, seedCacheDirs: [] }), first);
      assert.equal(cached.mtimeMs(), mtime);
      // A corrupt cache file is ignored and rewritten (from the seed).
      fs.writeFileSync(path.join(dir, cached.name), '{"cacheKey":"nope"}');
      assert.deepEqual(compileUptoContracts({ cacheDir: dir }), first);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    assert.throws(
      () =>
        compileUptoContractSources({
          'sandbox/X402UptoPermit2Proxy.sol':
            'pragma solidity ^0.8.28; contract x402UptoPermit2Proxy { function f() public { undefinedThing(); } }',
        }),
      (err: Error) => /failed to compile the upto contracts/.test(err.message) && /undefinedThing/.test(err.message),
    );
  });

  it('the faucet approves Permit2 for the maximum with approve_permit2, and refuses a non-boolean', async () => {
    const allowance = (owner: Address) =>
      chain.publicClient.readContract({
        address: chain.usdc,
        abi: testUsdcAbi,
        functionName: 'allowance',
        args: [owner, PERMIT2],
      });
    assert.equal(await allowance(buyer.address), maxUint256);
    assert.equal(await allowance(unapproved.address), 0n);

    const fresh = privateKeyToAccount(generatePrivateKey()).address;
    const funded = await fundFromFaucet(chain, fresh, '1', { approvePermit2: true });
    assert.match(funded.permit2_approval_tx ?? '', /^0x[0-9a-f]{64}$/);
    const receipt = await chain.publicClient.getTransactionReceipt({ hash: funded.permit2_approval_tx! });
    assert.equal(receipt.status, 'success');
    assert.equal(receipt.from.toLowerCase(), fresh.toLowerCase());
    assert.equal(await allowance(fresh), maxUint256);
    assert.equal(funded.balance_raw, '1000000');

    const plain = await fundFromFaucet(chain, fresh, '1', { approvePermit2: false });
    assert.equal(plain.permit2_approval_tx, undefined);
    for (const approve_permit2 of ['yes', 1, null]) {
      const refused = await postJson(`${chain.faucetUrl}/fund`, { address: fresh, amount_usd: '1', approve_permit2 });
      assert.equal(refused.status, 400, JSON.stringify(refused.body));
      assert.equal(refused.body.error_code, 'invalid_request');
    }
    assert.equal(await readTokenBalance(chain, fresh), 2_000_000n);
    assert.match(
      await chain.registry.metrics(),
      /treasury_sandbox_faucet_permit2_approvals_total\{outcome="approved"\} [1-9]/,
    );
  });

  it('GET /supported lists upto on eip155:84532 with the facilitator address', async () => {
    const res = await fetch(`${chain.facilitatorUrl}/supported`);
    const supported = (await res.json()) as {
      kinds: Array<{ x402Version: number; scheme: string; network: string; extra?: Record<string, unknown> }>;
    };
    const upto = supported.kinds.filter((k) => k.scheme === 'upto');
    assert.deepEqual(upto, [
      {
        x402Version: 2,
        scheme: 'upto',
        network: 'eip155:84532',
        extra: { facilitatorAddress: chain.facilitatorAddress },
      },
    ]);
    const viaClient = await new HTTPFacilitatorClient({ url: chain.facilitatorUrl, timeoutMs: 20_000 }).getSupported();
    assert.ok(
      viaClient.kinds.some((k) => k.scheme === 'upto' && k.extra?.facilitatorAddress === chain.facilitatorAddress),
    );
  });

  it('an official upto payload verifies at the maximum, settles 40000 of 100000, and cannot be settled again', async () => {
    const max = requirements();
    const payload = await pay(buyer, max);
    const auth = authorizationOf(payload);
    assert.equal(auth.spender, X402_UPTO_PERMIT2_PROXY);
    assert.equal(auth.witness.facilitator, chain.facilitatorAddress);
    assert.equal(auth.permitted.amount, '100000');

    const verified = await postJson(`${chain.facilitatorUrl}/verify`, body(payload, max));
    assert.equal(verified.status, 200);
    assert.equal(verified.body.isValid, true, JSON.stringify(verified.body));
    assert.equal(verified.body.payer, buyer.address);

    const actual = requirements({ amount: '40000' });
    const [buyerBefore, payToBefore, facilitatorBefore] = await Promise.all([
      readTokenBalance(chain, buyer.address),
      readTokenBalance(chain, payTo),
      readTokenBalance(chain, chain.facilitatorAddress),
    ]);
    const settled = await postJson(`${chain.facilitatorUrl}/settle`, body(payload, actual));
    const receipt = await assertSettledOnChain(chain, settled, buyer.address);
    assert.equal(settled.body.amount, '40000');
    assert.equal(receipt.to?.toLowerCase(), X402_UPTO_PERMIT2_PROXY.toLowerCase());
    assert.equal(await readTokenBalance(chain, buyer.address), buyerBefore - 40_000n);
    assert.equal(await readTokenBalance(chain, payTo), payToBefore + 40_000n);
    assert.equal(await readTokenBalance(chain, chain.facilitatorAddress), facilitatorBefore);

    const again = await postJson(`${chain.facilitatorUrl}/settle`, body(payload, actual));
    assert.equal(again.status, 200);
    assert.equal(again.body.success, false, JSON.stringify(again.body));
    assert.equal(again.body.transaction, '');
    assert.equal(again.body.errorReason, 'permit2_simulation_failed', JSON.stringify(again.body));
    assert.equal(await readTokenBalance(chain, payTo), payToBefore + 40_000n);
    // The cause on chain: Permit2 has used the payload's nonce.
    assert.equal(
      await revertName(simulateSettle(payload, { account: chain.facilitatorAddress, amount: 1n })),
      'InvalidNonce',
    );
    const reverify = await postJson(`${chain.facilitatorUrl}/verify`, body(payload, max));
    assert.equal(reverify.body.isValid, false, JSON.stringify(reverify.body));
  });

  it('settling more than the signed maximum is refused and moves nothing', async () => {
    const max = requirements({ amount: '10000' });
    const payload = await pay(buyer, max);
    const before = await readTokenBalance(chain, payTo);
    const over = await postJson(`${chain.facilitatorUrl}/settle`, body(payload, requirements({ amount: '10001' })));
    assert.equal(over.body.success, false, JSON.stringify(over.body));
    assert.equal(over.body.errorReason, 'invalid_upto_evm_payload_settlement_exceeds_amount');
    assert.equal(await readTokenBalance(chain, payTo), before);
  });

  it('a payload whose witness names another facilitator gets upto_facilitator_mismatch', async () => {
    const other = anvilDevAccount(5).address;
    const foreign = requirements({}, { facilitatorAddress: other });
    const payload = await pay(buyer, foreign);
    assert.equal(authorizationOf(payload).witness.facilitator, other);
    const verified = await postJson(`${chain.facilitatorUrl}/verify`, body(payload, foreign));
    assert.equal(verified.body.isValid, false);
    assert.equal(verified.body.invalidReason, 'upto_facilitator_mismatch', JSON.stringify(verified.body));
    const settled = await postJson(`${chain.facilitatorUrl}/settle`, body(payload, foreign));
    assert.equal(settled.body.success, false);
  });

  it('an account without the Permit2 allowance gets permit2_allowance_required', async () => {
    const max = requirements();
    const payload = await pay(unapproved, max);
    const verified = await postJson(`${chain.facilitatorUrl}/verify`, body(payload, max));
    assert.equal(verified.body.isValid, false);
    assert.equal(verified.body.invalidReason, 'permit2_allowance_required', JSON.stringify(verified.body));
    const before = await readTokenBalance(chain, unapproved.address);
    const settled = await postJson(`${chain.facilitatorUrl}/settle`, body(payload, requirements({ amount: '1000' })));
    assert.equal(settled.body.success, false);
    assert.equal(await readTokenBalance(chain, unapproved.address), before);
  });

  it('the proxy enforces the witness rules itself (direct eth_calls)', async () => {
    const payload = await pay(buyer, requirements());
    const { witness } = settleArgsOf(payload);
    const settle = (account: Address, amount: bigint, owner: Address, w: typeof witness) =>
      simulateSettle(payload, { account, amount, owner, witness: w });
    const facilitator = chain.facilitatorAddress;

    assert.equal(
      await revertName(settle(anvilDevAccount(5).address, 1n, buyer.address, witness)),
      'UnauthorizedFacilitator',
    );
    assert.equal(await revertName(settle(facilitator, 100_001n, buyer.address, witness)), 'AmountExceedsPermitted');
    assert.equal(
      await revertName(settle(facilitator, 1n, buyer.address, { ...witness, validAfter: 2n ** 40n })),
      'PaymentTooEarly',
    );
    assert.equal(
      await revertName(
        settle(facilitator, 1n, buyer.address, { ...witness, to: '0x0000000000000000000000000000000000000000' }),
      ),
      'InvalidDestination',
    );
    assert.equal(
      await revertName(settle(facilitator, 1n, '0x0000000000000000000000000000000000000000', witness)),
      'InvalidOwner',
    );
    // Changing the recipient breaks the signed witness: Permit2 refuses the signature.
    assert.equal(
      await revertName(settle(facilitator, 1n, buyer.address, { ...witness, to: anvilDevAccount(6).address })),
      'InvalidSigner',
    );
    // The untouched call simulates fine from the facilitator's address (and only from there).
    await settle(facilitator, 1n, buyer.address, witness);

    // settleWithPermit: the EIP-2612 value must be the signed maximum; a permit the token cannot use
    // (TestUsdc has no EIP-2612) is ignored and the existing Permit2 allowance carries the transfer.
    const args = settleArgsOf(payload);
    const permit2612 = (value: bigint) => ({
      value,
      deadline: args.permit.deadline,
      r: `0x${'11'.repeat(32)}` as Hex,
      s: `0x${'22'.repeat(32)}` as Hex,
      v: 27,
    });
    const withPermit = (value: bigint) =>
      chain.publicClient.simulateContract({
        account: facilitator,
        address: X402_UPTO_PERMIT2_PROXY,
        abi: proxyWithPermit2Errors,
        functionName: 'settleWithPermit',
        args: [permit2612(value), args.permit, 1n, args.owner, args.witness, args.signature],
      });
    assert.equal(await revertName(withPermit(99_999n)), 'Permit2612AmountMismatch');
    await withPermit(100_000n);
  });
});
